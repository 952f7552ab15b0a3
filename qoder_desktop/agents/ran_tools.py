"""Tool calls that ran, read from the message stream instead of a PostToolUse hook.

Every hook is a round trip the agent's CLI waits for on each tool call (it serialises
the call, asks us, waits, parses the answer). A call that ran is in the message stream
anyway: the assistant's `ToolUseBlock` (id, tool, input) and then a `ToolResultBlock`
for that id. `RanTools` pairs them and writes the same ``PostToolUse`` ledger row the
hook wrote, with the input the tool ran with (ours when the person edited it).

Only results without an error are taken from the stream: an error result can be a
denial (the tool never ran), so failures still come from the ``PostToolUseFailure``
hook, which the CLI runs only when a tool fails. The ``PreToolUse`` hook stays: it is
what makes a revoked grant ask again.
"""

from __future__ import annotations

from typing import Any, Protocol

from qoder_desktop.domain.hook_events import ToolEventPhase

MAX_TRACKED = 2_000
"""Calls whose result has not come yet, kept at most (the oldest are dropped first)."""


class ToolSink(Protocol):
    """Where a call that ran is reported (the adapter's `SessionSink`)."""

    def tool_seen(self, session_id: str, tool_use_id: str | None, tool_name: str,
                  tool_input: dict[str, Any], phase: ToolEventPhase) -> None:
        """A tool call passed a hook (or, here, the stream)."""
        ...


class RanTools:
    """Pairs tool calls with their results in one session's message stream."""

    def __init__(self, session_id: str, sink: ToolSink) -> None:
        self._session_id = session_id
        self._sink = sink
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._edited: dict[str, dict[str, Any]] = {}

    def called(self, block: Any) -> None:
        """An assistant `ToolUseBlock`: remember its tool and input until its result."""
        tool_use_id = getattr(block, "id", None)
        tool_input = getattr(block, "input", None)
        if not isinstance(tool_use_id, str) or not isinstance(tool_input, dict):
            return
        self._calls[tool_use_id] = (str(getattr(block, "name", "")), tool_input)
        while len(self._calls) > MAX_TRACKED:
            self._calls.pop(next(iter(self._calls)))

    def allowed(self, tool_use_id: str | None, final_input: dict[str, Any]) -> None:
        """We allowed the call with `final_input` (perhaps edited): that is what runs."""
        if tool_use_id:
            self._edited[tool_use_id] = final_input
            while len(self._edited) > MAX_TRACKED:
                self._edited.pop(next(iter(self._edited)))

    def result(self, block: Any) -> None:
        """A `ToolResultBlock`: a result without an error is a call that ran."""
        tool_use_id = getattr(block, "tool_use_id", None)
        if not isinstance(tool_use_id, str):
            return
        call = self._calls.pop(tool_use_id, None)
        edited = self._edited.pop(tool_use_id, None)
        if call is None or getattr(block, "is_error", False):
            return
        name, tool_input = call
        self._sink.tool_seen(self._session_id, tool_use_id, name,
                             edited if edited is not None else tool_input,
                             ToolEventPhase.POST_TOOL_USE)
