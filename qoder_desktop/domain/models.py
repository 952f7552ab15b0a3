"""Value objects that travel the path of one approval.

Everything here is plain pydantic: no Qt, no SDK types. The backend adapters translate
SDK objects into these models, the broker decides with them, the UI shows them and the
storage writes them to the ledger.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from qoder_desktop.domain.consent import ModeConsent

# Re-exported: these enums lived here before they moved to `kinds` (no pydantic).
from qoder_desktop.domain.kinds import (
    Backend,
    DecidedBy,
    DecisionKind,
    PermissionMode,
    RequestKind,
    RuleBehavior,
    SessionState,
)
from qoder_desktop.domain.tools import PLAN_TOOL, QUESTION_TOOL


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def new_id() -> str:
    """A fresh opaque identifier."""
    return uuid.uuid4().hex


_RULE_TEXT = re.compile(r"^(?P<tool>[A-Za-z0-9_.:\-]+)(?:\((?P<content>.*)\))?$", re.DOTALL)


class RuleValue(BaseModel):
    """One rule in Claude Code's syntax: `Tool` or `Tool(specifier)`."""

    model_config = ConfigDict(frozen=True)

    tool_name: str = Field(min_length=1)
    rule_content: str | None = None

    @field_validator("rule_content")
    @classmethod
    def _empty_means_whole_tool(cls, value: str | None) -> str | None:
        return value if value else None

    @classmethod
    def parse(cls, text: str) -> RuleValue:
        """Parse `Bash(npm run test:*)` or `Read` into a rule value.

        Raises:
            ValueError: when the text is not in the `Tool` / `Tool(specifier)` form.
        """
        match = _RULE_TEXT.match(text.strip())
        if not match:
            raise ValueError(f"not a rule (expected Tool or Tool(specifier)): {text!r}")
        return cls(tool_name=match["tool"], rule_content=match["content"])

    def __str__(self) -> str:
        if self.rule_content is None:
            return self.tool_name
        return f"{self.tool_name}({self.rule_content})"


SuggestionType = Literal[
    "addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"
]
Destination = Literal["session", "localSettings", "projectSettings", "userSettings", "cliArg"]


class PermissionSuggestion(BaseModel):
    """A permission update, as suggested by the CLI or granted by the user."""

    model_config = ConfigDict(frozen=True)

    type: SuggestionType
    rules: tuple[RuleValue, ...] | None = None
    behavior: RuleBehavior | None = None
    mode: str | None = None
    directories: tuple[str, ...] | None = None
    destination: Destination | None = None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> PermissionSuggestion:
        """Build from the control protocol's camelCase dict.

        Raises:
            ValueError: when the dict is not a permission update.
        """
        if not isinstance(data, dict):
            raise ValueError(f"permission update must be an object, got {type(data).__name__}")
        raw_rules = data.get("rules")
        rules = None
        if raw_rules is not None:
            if not isinstance(raw_rules, list):
                raise ValueError("permission update 'rules' must be a list")
            rules = tuple(
                RuleValue(tool_name=r["toolName"], rule_content=r.get("ruleContent"))
                for r in raw_rules
            )
        dirs = data.get("directories")
        return cls(
            type=data.get("type"),  # type: ignore[arg-type]
            rules=rules,
            behavior=data.get("behavior"),
            mode=data.get("mode"),
            directories=tuple(dirs) if dirs is not None else None,
            destination=data.get("destination"),
        )

    def to_wire(self) -> dict[str, Any]:
        """The control protocol dict; `ruleContent` is omitted for whole-tool rules."""
        result: dict[str, Any] = {"type": self.type, "destination": self.destination or "session"}
        if self.rules is not None:
            wire_rules = []
            for rule in self.rules:
                item: dict[str, Any] = {"toolName": rule.tool_name}
                if rule.rule_content is not None:
                    item["ruleContent"] = rule.rule_content
                wire_rules.append(item)
            result["rules"] = wire_rules
        if self.behavior is not None:
            result["behavior"] = self.behavior.value
        if self.mode is not None:
            result["mode"] = self.mode
        if self.directories is not None:
            result["directories"] = list(self.directories)
        return result

    def describe(self) -> str:
        """A one-line, human-readable summary for checkboxes and the ledger."""
        where = self.destination or "session"
        if self.type in ("addRules", "replaceRules", "removeRules"):
            rules = ", ".join(str(r) for r in self.rules or ())
            verb = {"addRules": "add", "replaceRules": "replace with", "removeRules": "remove"}
            return f"{verb[self.type]} {self.behavior or '?'} rule {rules} ({where})"
        if self.type == "setMode":
            return f"switch permission mode to {self.mode} ({where})"
        dirs = ", ".join(self.directories or ())
        verb2 = "allow access to" if self.type == "addDirectories" else "remove access to"
        return f"{verb2} {dirs} ({where})"


class ApprovalRequest(BaseModel):
    """One tool call (or question) that an agent asked permission for."""

    model_config = ConfigDict(frozen=True)

    request_id: str = Field(default_factory=new_id)
    session_id: str
    session_name: str = ""
    backend: Backend
    tool_name: str = Field(min_length=1)
    tool_input: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    decision_reason: str | None = None
    blocked_path: str | None = None
    agent_id: str | None = None
    tool_use_id: str | None = None
    suggestions: tuple[PermissionSuggestion, ...] = ()
    cwd: str | None = None
    add_dirs: tuple[str, ...] = ()
    """The session's added directories (its folder is `cwd`)."""
    project_settings_file: str | None = None
    """Where "save to the project" writes this backend's rules; None when the session
    does not load that file (saving there would not take effect)."""
    covered_by_rule: str | None = None
    """A session rule that covers this call (set by the broker, never an answer): the
    agent asked anyway, or, with `granted_while_waiting`, asked before it held the rule."""
    granted_while_waiting: bool = False
    """True when `covered_by_rule` was granted while this request waited: the agent's CLI
    asked before it held that rule. The person still decides (one key allows it once)."""
    host: str | None = None
    """The remote host the request came from, known by the socket it arrived on (never
    by what the request says); None for this machine."""
    received_at: datetime = Field(default_factory=utc_now)

    @property
    def kind(self) -> RequestKind:
        """Whether this is a tool approval, a question or a plan approval."""
        if self.tool_name == QUESTION_TOOL:
            return RequestKind.QUESTION
        if self.tool_name == PLAN_TOOL:
            return RequestKind.PLAN
        return RequestKind.TOOL

    @property
    def label(self) -> str:
        """A short name for the tool, preferring the SDK's display name."""
        return self.display_name or self.tool_name


class Decision(BaseModel):
    """The answer to one `ApprovalRequest`.

    An allow always carries the exact input that will run, and comes from a person
    (`DecidedBy.USER`) or records what the agent's CLI allowed itself (`DecidedBy.CLI`):
    nothing else can make one, so no rule or program path of ours turns into an allow by
    accident. A deny always carries a non-empty message (the Qoder SDK refuses empty ones).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    kind: DecisionKind
    final_input: dict[str, Any] | None = None
    updates: tuple[PermissionSuggestion, ...] = ()
    message: str = ""
    decided_by: DecidedBy = DecidedBy.USER
    rule: str | None = None
    answer_labels: dict[str, tuple[str, ...]] | None = None
    next_mode: PermissionMode | None = None
    """For an approved plan (ExitPlanMode): the mode the session continues in."""
    consent: ModeConsent | None = Field(default=None, exclude=True, repr=False)
    """The person's confirmation of a `next_mode` that needs one, minted by the
    confirmation box the plan dialog opens; without it the session goes on in default."""
    decided_at: datetime = Field(default_factory=utc_now)
    device: str | None = None
    """The paired device a person answered on (Away mode), as its label; None at the desk."""

    @model_validator(mode="after")
    def _consistent(self) -> Decision:
        if self.kind.allows and self.final_input is None:
            raise ValueError("an allow needs the final input that will run")
        if self.kind.allows and not self.decided_by.may_allow:
            raise ValueError("only a person or the agent's CLI allows a call, not "
                             f"{self.decided_by.value}")
        denies = (DecisionKind.DENY, DecisionKind.DENY_INTERRUPT, DecisionKind.KEEP_PLANNING,
                  DecisionKind.ERROR)
        if self.kind in denies and not self.message.strip():
            raise ValueError("a deny needs a non-empty message")
        if self.updates and self.kind is not DecisionKind.ALLOW_SESSION:
            raise ValueError("permission updates go only with 'allow for this session'")
        if self.next_mode is not None and not self.kind.allows:
            raise ValueError("only an allow can choose the mode to continue in")
        if self.next_mode is not None and self.next_mode.is_dangerous:
            raise ValueError("an approved plan never continues in a bypass mode")
        return self

    @property
    def interrupt(self) -> bool:
        """True when the agent should stop after this answer."""
        return self.kind is DecisionKind.DENY_INTERRUPT

    @classmethod
    def allow_once(cls, final_input: dict[str, Any], *, by: DecidedBy = DecidedBy.USER,
                   rule: str | None = None,
                   answer_labels: dict[str, tuple[str, ...]] | None = None,
                   next_mode: PermissionMode | None = None,
                   consent: ModeConsent | None = None) -> Decision:
        """Allow this one call with `final_input` (for a question, also the chosen labels;
        for an approved plan, the mode the session continues in and the person's consent
        to it when it needs one)."""
        return cls(kind=DecisionKind.ALLOW_ONCE, final_input=final_input, decided_by=by, rule=rule,
                   answer_labels=answer_labels, next_mode=next_mode, consent=consent)

    @classmethod
    def allow_session(cls, final_input: dict[str, Any],
                      updates: tuple[PermissionSuggestion, ...]) -> Decision:
        """Allow this call and grant `updates` for the rest of the session."""
        return cls(kind=DecisionKind.ALLOW_SESSION, final_input=final_input, updates=updates)

    @classmethod
    def deny(cls, message: str, *, interrupt: bool = False, by: DecidedBy = DecidedBy.USER,
             rule: str | None = None) -> Decision:
        """Deny with `message` (a default is used when it is blank)."""
        text = message.strip() or "The user denied this tool call."
        kind = DecisionKind.DENY_INTERRUPT if interrupt else DecisionKind.DENY
        return cls(kind=kind, message=text, decided_by=by, rule=rule)

    @classmethod
    def keep_planning(cls, feedback: str) -> Decision:
        """Send a plan back to be worked on (`feedback`, or a default, goes to the agent as
        the deny message; the agent stays in plan mode)."""
        text = feedback.strip() or "Keep planning."
        return cls(kind=DecisionKind.KEEP_PLANNING, message=text)

    @classmethod
    def withdrawn(cls, reason: str = "") -> Decision:
        """The agent cancelled the request before anyone answered (`reason`: why, if known)."""
        return cls(kind=DecisionKind.WITHDRAWN, decided_by=DecidedBy.WITHDRAWN,
                   message=reason.strip() or "The agent withdrew the request.")

    @classmethod
    def error(cls, message: str) -> Decision:
        """Something failed between request and answer: fail closed."""
        text = message.strip() or "Qoder Desktop failed while handling this request."
        return cls(kind=DecisionKind.ERROR, decided_by=DecidedBy.ERROR, message=text)


class SessionRule(BaseModel):
    """A rule that answers requests of one session without asking."""

    model_config = ConfigDict(frozen=True)

    rule_id: str = Field(default_factory=new_id)
    session_id: str
    behavior: RuleBehavior
    rule: RuleValue
    granted_by: str = "user"
    granted_at: datetime = Field(default_factory=utc_now)
    revoked_at: datetime | None = None
    removal_delivered_at: datetime | None = None
    """When the agent's CLI was sent the removal of this revoked allow rule (inside an
    answer it took: a CLI cannot be told otherwise)."""

    @property
    def active(self) -> bool:
        """True until the rule is revoked."""
        return self.revoked_at is None

    @property
    def removal_pending(self) -> bool:
        """A revoked allow rule the agent's CLI may still hold: its removal is not sent."""
        return (self.revoked_at is not None and self.behavior is RuleBehavior.ALLOW
                and self.removal_delivered_at is None)


class SessionInfo(BaseModel):
    """What the app knows about one agent session."""

    session_id: str = Field(default_factory=new_id)
    name: str
    backend: Backend
    cwd: str
    permission_mode: PermissionMode = PermissionMode.DEFAULT
    state: SessionState = SessionState.STARTING
    created_at: datetime = Field(default_factory=utc_now)
    error: str | None = None
    host: str | None = None
    """The remote host a terminal session runs on (None: this machine)."""
