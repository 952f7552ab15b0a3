"""What a person chooses when starting an agent session, and what the session reports."""

from __future__ import annotations

import os
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from qoder_desktop.domain.models import Backend, PermissionMode, utc_now


class SettingSource(StrEnum):
    """Which CLI settings files a session loads."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"


class SessionOptions(BaseModel):
    """Every option a user can set for one session (the new-session form and the CLI flags).

    Modes that let tools run unapproved (`PermissionMode.needs_confirmation`) are refused
    unless `bypass_confirmed` says the user explicitly confirmed.
    """

    model_config = ConfigDict(extra="forbid")

    backend: Backend = Backend.CLAUDE
    prompt: str = ""
    name: str = ""
    cwd: str = Field(default_factory=os.getcwd)
    add_dirs: list[str] = Field(default_factory=list)
    tools: list[str] | None = None
    allowed_tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list)
    permission_mode: PermissionMode = PermissionMode.DEFAULT
    bypass_confirmed: bool = False
    model: str | None = None
    settings_permissions: dict[str, Any] | None = None
    setting_sources: list[SettingSource] = Field(default_factory=list)
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    scenario: str | None = None
    """For the scripted model only: which scenario to play."""

    @model_validator(mode="after")
    def _risky_modes_need_confirmation(self) -> SessionOptions:
        mode = self.permission_mode
        if mode.needs_confirmation and not self.bypass_confirmed:
            raise ValueError(
                f"permission mode {mode.value}: {mode.risk_text}; "
                "it needs an explicit confirmation")
        return self

    def display_name(self) -> str:
        """The session's name, or the last part of its folder."""
        return self.name or os.path.basename(os.path.normpath(self.cwd)) or self.cwd


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


class TranscriptEvent(BaseModel):
    """One line of a session's transcript, in our own terms (not an SDK message)."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    kind: TranscriptKind
    text: str = ""
    tool_name: str | None = None
    tool_use_id: str | None = None
    is_error: bool = False
    at: datetime = Field(default_factory=utc_now)
