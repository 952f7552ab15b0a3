"""One session's transcript as a person reads it, written from what its adapter sees.

`TranscriptWriter` turns the message stream and the answers given into transcript lines:
a call the person edited shows what ran (the agent's original folded under it), a
denial is one line (the CLI's echo of the reason is dropped), the CLI's instructions to
the model are folded under "details", and a call that put the agent into plan mode is
reported back so the session can show its new mode. Qt-free.
"""

from __future__ import annotations

from typing import Any

from qoder_desktop.agents.sink import SessionSink
from qoder_desktop.agents.transcript import (
    ToolCallPairing,
    edited_fields,
    readable_result,
    result_text,
    summarize_call,
)
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.domain.tools import ENTER_PLAN_TOOL, PLAN_TOOL

MAX_TRACKED = 2_000
"""Calls remembered per kind (plan-mode calls, denials) at most; the oldest go first."""


def _remember(store: dict[str, Any], key: str, value: Any) -> None:
    store[key] = value
    while len(store) > MAX_TRACKED:
        store.pop(next(iter(store)))


class TranscriptWriter:
    """Writes one session's transcript lines to its sink."""

    def __init__(self, session_id: str, sink: SessionSink) -> None:
        self._session_id = session_id
        self._sink = sink
        self._pairing = ToolCallPairing()
        self._plan_calls: dict[str, bool] = {}
        self._denied: dict[str, str] = {}
        self._ours: dict[str, bool] = {}  # calls a person (or we, failing closed) denied

    def line(self, line: TranscriptEvent) -> None:
        """Write a line made elsewhere (paired with its call if it is a result); the CLI's
        own report of a denial we gave is dropped (our line already says it)."""
        if line.kind is TranscriptKind.DENIAL and line.tool_use_id in self._ours:
            return
        self._sink.add_transcript_line(self._pairing.pair(line))

    def emit(self, kind: TranscriptKind, text: str = "", **fields: Any) -> None:
        """Write a new line of `kind`."""
        self.line(TranscriptEvent(session_id=self._session_id, kind=kind, text=text, **fields))

    def call(self, tool_name: str, tool_use_id: str, tool_input: dict[str, Any]) -> None:
        """The agent called a tool."""
        if tool_name == ENTER_PLAN_TOOL:
            _remember(self._plan_calls, tool_use_id, True)
        plan = tool_input.get("plan") if tool_name == PLAN_TOOL else None
        details = plan if isinstance(plan, str) and plan.strip() else ""
        # (a plan's line is its heading; the whole plan is one click away, in "details")
        self.emit(TranscriptKind.TOOL_CALL, summarize_call(tool_name, tool_input),
                  tool_name=tool_name, tool_use_id=tool_use_id, details=details)

    def edited(self, tool_use_id: str | None, tool_name: str, original: dict[str, Any],
               final: dict[str, Any]) -> None:
        """The person allowed the call with an input of their own: the call's line is
        replaced by one that shows what runs, with the agent's original folded under it."""
        if not tool_use_id or original == final:
            return
        text = summarize_call(tool_name, final)
        self._pairing.renamed(tool_use_id, text)
        self._sink.add_transcript_line(TranscriptEvent(
            session_id=self._session_id, kind=TranscriptKind.TOOL_CALL, text=text,
            tool_name=tool_name, tool_use_id=tool_use_id,
            original_text=edited_fields(original, final)))

    def denied(self, tool_use_id: str | None, tool_name: str | None, message: str, *,
               keep_planning: bool = False) -> None:
        """A call was denied with `message` (one line; the CLI's echo of it is dropped)."""
        self.emit(TranscriptKind.DENIAL, message, is_error=not keep_planning,
                  tool_name=tool_name, tool_use_id=tool_use_id)
        if tool_use_id:
            _remember(self._denied, tool_use_id, message)
            _remember(self._ours, tool_use_id, True)

    def result(self, tool_use_id: str, content: Any, is_error: bool) -> bool:
        """A call's result came back; True when it put the agent into plan mode."""
        entered_plan = self._plan_calls.pop(tool_use_id, False) and not is_error
        shown, details = readable_result(result_text(content))
        message = self._denied.pop(tool_use_id, None)
        if message is not None:
            if shown.strip() == message.strip() and not details:
                self._pairing.forget(tool_use_id)
                return entered_plan
            # Only what the CLI told the model beyond the reason, folded away.
            shown, details = "", details or shown
            is_error = False
        self.emit(TranscriptKind.TOOL_RESULT, shown, tool_use_id=tool_use_id,
                  is_error=is_error, details=details)
        return entered_plan
