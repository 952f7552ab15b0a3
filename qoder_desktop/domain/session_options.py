"""What a person chooses when starting an agent session, and what the session reports."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from qoder_desktop.domain.consent import ModeConsent, spend

# Re-exported: these enums lived here before they moved to `kinds` (no pydantic).
from qoder_desktop.domain.kinds import (  # noqa: F401
    DEMO_SCENARIO,
    SettingSource,
    TranscriptKind,
)
from qoder_desktop.domain.models import Backend, PermissionMode, utc_now
from qoder_desktop.domain.tools import UNATTENDED_RISK_TOOLS

"""Tools that run commands or change files: a whole-tool allow rule for one needs a
confirmation."""


def _tool_of(rule_text: str) -> str:
    return rule_text.strip().split("(", 1)[0].strip()


def _whole_risky_tool(rule_text: str) -> bool:
    """True for `Bash`, `Bash()`, `Bash(*)` and the like for a tool that can do harm."""
    text = rule_text.strip()
    tool = _tool_of(text)
    specifier = text[len(tool):].replace(" ", "")
    return tool in UNATTENDED_RISK_TOOLS and specifier in ("", "()", "(*)")


class SessionOptions(BaseModel):
    """Every option a user can set for one session (the new-session form and the CLI flags).

    Options that let tools run unapproved (`risks`) start only with `consent`: the
    `ModeConsent` the confirmation dialog minted for exactly these risks. The session's
    start checks and spends it (`AgentSession.start`); without it the start fails.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    backend: Backend = Backend.CLAUDE
    prompt: str = ""
    name: str = ""
    cwd: str = Field(default_factory=os.getcwd)
    add_dirs: list[str] = Field(default_factory=list)
    tools: list[str] | None = None
    allowed_tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list)
    permission_mode: PermissionMode = PermissionMode.DEFAULT
    model: str | None = None
    settings_permissions: dict[str, Any] | None = None
    setting_sources: list[SettingSource] = Field(default_factory=list)
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    scenario: str | None = None
    """For the scripted model only: which scenario to play."""
    consent: ModeConsent | None = Field(default=None, exclude=True, repr=False)
    """The person's confirmation of `risks` (from the confirmation dialog only)."""

    def risks(self) -> list[str]:
        """What in these options lets tools run that nobody approved, one line each.

        The one policy for risky session options: a mode that needs a confirmation, and a
        whole-tool allow rule (in `allowed_tools` or `settings_permissions`) for a tool
        that runs commands or edits files. Every way to start a session asks for the same
        explicit confirmation of these.
        """
        mode = self.permission_mode
        found = [f"permission mode {mode.value}: {mode.risk_text}"] if (
            mode.needs_confirmation) else []
        allow = (self.settings_permissions or {}).get("allow")
        rules = [*self.allowed_tools, *(allow if isinstance(allow, list) else [])]
        for text in rules:
            if isinstance(text, str) and _whole_risky_tool(text):
                found.append(f"allowed tool {text.strip()}: every {_tool_of(text)} call runs "
                             "without asking")
        return found

    def spend_consent(self) -> bool:
        """At the start: spend `consent` on these options' risks; True when there were
        some (confirmed), False when there are none.

        Raises:
            ConsentRefused: risks without the person's consent to exactly them.
        """
        risks = self.risks()
        if risks:
            spend(self.consent, session_id=None, mode=self.permission_mode, risks=risks)
        return bool(risks)

    def display_name(self) -> str:
        """The session's name, or the last part of its folder."""
        return self.name or os.path.basename(os.path.normpath(self.cwd)) or self.cwd


class TranscriptEvent(BaseModel):
    """One line of a session's transcript, in our own terms (not an SDK message)."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    kind: TranscriptKind
    text: str = ""
    tool_name: str | None = None
    tool_use_id: str | None = None
    is_error: bool = False
    details: str = ""
    """Text folded away behind "details" (the CLI's own instructions to the model)."""
    original_text: str | None = None
    """On a tool call the person edited before allowing it: the agent's original (the
    line's `text` is what ran). A line with the id of a call already shown replaces it."""
    at: datetime = Field(default_factory=utc_now)
