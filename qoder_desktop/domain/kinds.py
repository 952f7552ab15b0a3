"""The domain's plain enumerations (no pydantic), for code that must load fast.

The main window is built from these before its first paint, and the pydantic models
(`domain.models`, `domain.session_options`, which re-export them) load after it.
"""

from __future__ import annotations

from enum import StrEnum


class Backend(StrEnum):
    """Which agent SDK a session runs through.

    EXTERNAL: an agent started elsewhere that asks through the MCP gateway; TERMINAL: an
    agent a person started in a terminal or editor that asks through its
    ``PermissionRequest`` hook (its CLI holds its grants).
    """

    CLAUDE = "claude"
    QODER = "qoder"
    EXTERNAL = "external"
    TERMINAL = "terminal"


class PermissionMode(StrEnum):
    """The CLI's permission modes (Claude names; Qoder's `yolo` maps to bypass)."""

    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    AUTO = "auto"
    DONT_ASK = "dontAsk"
    BYPASS = "bypassPermissions"
    YOLO = "yolo"

    @property
    def is_dangerous(self) -> bool:
        """True for modes in which tools run without asking anyone."""
        return self in (PermissionMode.BYPASS, PermissionMode.YOLO)

    @property
    def needs_confirmation(self) -> bool:
        """True for modes in which the CLI lets tools run that nobody approved: the
        bypass modes, `auto` (a classifier decides) and `acceptEdits` (every file edit).

        The one policy for risky modes: the new-session form, the mode switch, the
        command line and a CLI's `setMode` suggestion all ask for the same explicit
        confirmation (a suggestion is never offered in the dialog)."""
        return self.is_dangerous or self in (PermissionMode.AUTO, PermissionMode.ACCEPT_EDITS)

    @property
    def description(self) -> str:
        """What the mode does, in a few words: the one wording every mode picker shows
        after the mode's name (`label`)."""
        return _MODE_DESCRIPTIONS[self]

    @property
    def label(self) -> str:
        """The mode's name and what it does, e.g. "plan — read only, propose a plan
        first", for pickers and menus."""
        return f"{self.value} — {self.description}"

    @property
    def risk_text(self) -> str:
        """What the person accepts with this mode, for the confirmation."""
        if self.is_dangerous:
            return ("every tool runs without asking — including deleting files and "
                    "running commands")
        if self is PermissionMode.AUTO:
            return "a classifier, not you, decides which tool calls run"
        if self is PermissionMode.ACCEPT_EDITS:
            return "every file edit is made without asking you"
        return "the agent asks before tools run"


_MODE_DESCRIPTIONS = {
    PermissionMode.DEFAULT: "ask before tools that change things",
    PermissionMode.ACCEPT_EDITS: "file edits run without asking",
    PermissionMode.PLAN: "read only, propose a plan first",
    PermissionMode.AUTO: "a classifier, not you, decides what needs asking",
    PermissionMode.DONT_ASK: "refuse whatever is not allowed",
    PermissionMode.BYPASS: "every tool runs without asking",
    PermissionMode.YOLO: "every tool runs without asking (Qoder)",
}


class RuleBehavior(StrEnum):
    """What a permission rule does when it matches."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


class RequestKind(StrEnum):
    """What sort of dialog a request needs."""

    TOOL = "tool"
    QUESTION = "question"
    PLAN = "plan"


class DecisionKind(StrEnum):
    """How a request ended.

    KEEP_PLANNING: the person sent a plan back (ExitPlanMode) to be worked on; the agent
    gets a deny with the feedback and stays in plan mode. Older ledgers hold these as
    DENY.
    """

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"
    DENY_INTERRUPT = "deny_interrupt"
    KEEP_PLANNING = "keep_planning"
    WITHDRAWN = "withdrawn"
    ERROR = "error"

    @property
    def allows(self) -> bool:
        """True when the tool may run."""
        return self in (DecisionKind.ALLOW_ONCE, DecisionKind.ALLOW_SESSION)


class DecidedBy(StrEnum):
    """Who (or what) produced a decision.

    Only a person (USER) or the agent's CLI (CLI) allows: `Decision` refuses an allow by
    anyone else. CLI marks ledger rows of calls the CLI ran under a session grant it
    holds (they never reached us); SESSION_RULE is a deny by one of the session's deny
    rules (older ledgers also hold allows recorded under it).
    """

    USER = "user"
    CLI = "cli"
    SESSION_RULE = "session_rule"
    WITHDRAWN = "withdrawn"
    ERROR = "error"

    @property
    def may_allow(self) -> bool:
        """True for those who may allow a call: a person, or the agent's CLI itself."""
        return self in (DecidedBy.USER, DecidedBy.CLI)


class SessionState(StrEnum):
    """Where a session is in its life."""

    STARTING = "starting"
    RUNNING = "running"
    WAITING = "waiting"
    IDLE = "idle"
    STOPPED = "stopped"
    FAILED = "failed"


class SettingSource(StrEnum):
    """Which CLI settings files a session loads."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"


class TranscriptKind(StrEnum):
    """What one line of a session's transcript is."""

    USER_PROMPT = "user_prompt"
    ASSISTANT_TEXT = "assistant_text"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    DENIAL = "denial"
    RESULT = "result"
    ERROR = "error"
    SYSTEM = "system"


DEMO_SCENARIO = "demo"
"""The scripted scenario `--demo` plays unless `--scenario` names another."""
