"""Following a terminal session's transcript file (the JSON lines its CLI appends).

Each hook request names the session's ``transcript_path``. Reading it shows, read-only,
what the agent did before it asked (prompts, text, tool calls and results), and tells
when a tool call got its result although our request for it is still open: the person
answered in the terminal, so our dialog is stale.

A cheap poll on the app's loop: one ``stat`` per interval, and only new complete lines
are read and parsed. Qt-free.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qoder_desktop.agents.transcript import (
    ToolCallPairing,
    readable_result,
    result_text,
    summarize_input,
)
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind

log = logging.getLogger(__name__)

POLL_SECONDS = 0.25
FIRST_READ_LIMIT = 4 * 1024 * 1024
"""A long session's history: only its last few megabytes are read at first."""
CHUNK = 1024 * 1024

ResultSeen = Callable[[str, dict[str, Any]], None]
"""Called with (tool name, tool input) when a tool call's result appears."""


class TranscriptFollower:
    """Turns new lines of one transcript file into transcript events.

    Args:
        path: the ``transcript_path`` the CLI reported.
        session_id: the session the events belong to.
        on_event: receives each transcript event (the hub's ``add_transcript_line``).
        on_result: told of each tool result, with the call's name and input.
    """

    def __init__(self, path: str | os.PathLike[str], session_id: str,
                 on_event: Callable[[TranscriptEvent], None],
                 on_result: ResultSeen | None = None) -> None:
        self.path = Path(path)
        self.session_id = session_id
        self._on_event = on_event
        self._on_result = on_result
        self._offset: int | None = None
        self._partial = b""
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._pairing = ToolCallPairing()
        self._task: asyncio.Task[None] | None = None

    # -- reading -------------------------------------------------------------------------

    def poll(self) -> int:
        """Read what was appended since the last poll; returns how many lines were read."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return 0
        if self._offset is None:
            self._offset = max(0, size - FIRST_READ_LIMIT)
            self._partial = b"" if self._offset == 0 else b"\0"  # skip a cut first line
        elif size < self._offset:  # the file was replaced or truncated: start over
            self._offset, self._partial = 0, b""
        if size == self._offset:
            return 0
        count = 0
        try:
            with self.path.open("rb") as stream:
                stream.seek(self._offset)
                while data := stream.read(CHUNK):
                    self._offset += len(data)
                    count += self._feed(data)
        except OSError as exc:
            log.debug("could not read the transcript %s: %s", self.path, exc)
        return count

    def _feed(self, data: bytes) -> int:
        *lines, self._partial = (self._partial + data).split(b"\n")
        if lines and lines[0].startswith(b"\0"):
            lines = lines[1:]
        for line in lines:
            if line.strip():
                self._line(line)
        return len(lines)

    def _line(self, raw: bytes) -> None:
        try:
            entry = json.loads(raw)
        except ValueError:
            return
        if not isinstance(entry, dict) or entry.get("isMeta") or entry.get("isSidechain"):
            return
        message = entry.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        if entry.get("type") == "user":
            if isinstance(content, str):
                self._emit(TranscriptKind.USER_PROMPT, content)
                return
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict):
                    self._user_block(block)
        elif entry.get("type") == "assistant":
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict):
                    self._assistant_block(block)

    def _user_block(self, block: dict[str, Any]) -> None:
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            self._emit(TranscriptKind.USER_PROMPT, str(block["text"]))
        elif block.get("type") == "tool_result":
            tool_use_id = str(block.get("tool_use_id", ""))
            # The CLI's words to the model (tags, reminders, plan-mode rules) fold away.
            shown, details = readable_result(result_text(block.get("content")))
            self._emit(TranscriptKind.TOOL_RESULT, shown, details=details,
                       tool_use_id=tool_use_id or None, is_error=bool(block.get("is_error")))
            call = self._calls.pop(tool_use_id, None)
            if call is not None and self._on_result is not None:
                try:
                    self._on_result(*call)
                except Exception:
                    log.exception("a transcript result handler failed")

    def _assistant_block(self, block: dict[str, Any]) -> None:
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            self._emit(TranscriptKind.ASSISTANT_TEXT, str(block["text"]))
        elif block.get("type") == "tool_use":
            name = str(block.get("name", "")) or "?"
            raw_input = block.get("input")
            tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            tool_use_id = str(block.get("id", ""))
            if tool_use_id:
                self._calls[tool_use_id] = (name, tool_input)
            self._emit(TranscriptKind.TOOL_CALL, summarize_input(tool_input), tool_name=name,
                       tool_use_id=tool_use_id or None)

    def _emit(self, kind: TranscriptKind, text: str, **fields: Any) -> None:
        try:
            self._on_event(self._pairing.pair(TranscriptEvent(
                session_id=self.session_id, kind=kind, text=text, **fields)))
        except Exception:
            log.exception("a transcript line could not be passed on")

    # -- following -----------------------------------------------------------------------

    def start(self, interval: float = POLL_SECONDS) -> None:
        """Poll on the running loop every `interval` seconds until `stop()`."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._follow(interval), name=f"transcript {self.session_id}")

    async def _follow(self, interval: float) -> None:
        while True:
            self.poll()
            await asyncio.sleep(interval)

    async def stop(self) -> None:
        """Stop polling; a poller that already died is logged, never raised."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        except Exception:
            # e.g. its timer fired while the loop was not running (Qt events processed
            # outside the loop, as pytest-qt does at teardown): the poller is gone anyway.
            log.warning("the transcript poller of %s had stopped with an error",
                        self.session_id, exc_info=True)
