"""Where a session reports what happens, and the error a failed start raises."""

from __future__ import annotations

from typing import Any, Protocol

from qoder_desktop.domain.hook_events import ToolEventPhase
from qoder_desktop.domain.models import SessionRule, SessionState
from qoder_desktop.domain.session_options import TranscriptEvent


class SessionSink(Protocol):
    """Where a session reports what happens (the session hub in the app)."""

    def add_transcript_line(self, event: TranscriptEvent) -> None:
        """A new transcript line."""
        ...

    def state_changed(self, session_id: str, state: SessionState, error: str | None) -> None:
        """The session's state changed (with the error text when it failed)."""
        ...

    def tool_seen(self, session_id: str, tool_use_id: str | None, tool_name: str,
                  tool_input: dict[str, Any], phase: ToolEventPhase) -> None:
        """A tool call passed a hook (PreToolUse, PostToolUse, PermissionDenied)."""
        ...

    def removals_due(self, session_id: str) -> list[SessionRule]:
        """Revoked allow rules whose removal has not reached the session's CLI yet."""
        ...

    def removals_delivered(self, session_id: str, rule_ids: list[str]) -> None:
        """An answer that tells the CLI to drop these revoked rules was handed to it."""
        ...


class SessionStartError(RuntimeError):
    """The agent CLI could not be started; the message says why."""
