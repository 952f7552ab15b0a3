"""Reading a terminal session's transcript file (the JSON lines its CLI appends), a slice
at a time.

Each hook request names the session's ``transcript_path``. Reading it shows, read-only,
what the agent did before it asked (prompts, text, tool calls and results), and tells
when a tool call got its result although our request for it is still open: the person
answered in the terminal, so our dialog is stale.

Any process of the user can append to the file, so reading it must never hold up the
app's loop: each poll reads at most `SLICE` bytes; when the file grows faster than
a person can read (more than `BACKLOG_LIMIT` unread), the reader skips ahead to the
last `TAIL_LINES` lines (within the last `TAIL` bytes), only counting the lines it
skips (and still noting the results among them), and says so in the transcript
("… N lines skipped"). A line longer than
`MAX_LINE` is never held whole: only its head is kept, to find a tool result's id.
The file is opened without following a symlink and without blocking, and read only
while it is a regular file of this user. Polling it on the loop is `transcript`'s
`TranscriptFollower`. Qt-free.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qoder_desktop.agents.transcript import (
    ToolCallPairing,
    readable_result,
    result_text,
    summarize_call,
)
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.domain.tools import PLAN_TOOL

log = logging.getLogger(__name__)

SLICE = 64 * 1024
"""Bytes read and parsed per loop turn."""
LINES_PER_POLL = 200
"""Lines parsed and passed on per loop turn (short lines cost per line, not per byte)."""
SKIP_SLICE = 1024 * 1024
"""Bytes counted (not parsed) per loop turn while skipping ahead."""
SLICE_PAUSE = 0.01
"""Seconds between slices while behind: reading never takes the whole loop."""
BACKLOG_LIMIT = 256 * 1024
"""More unread bytes than this (a long history, or a file growing faster than anyone
reads) are skipped, all but the last `TAIL` bytes."""
TAIL = 1024 * 1024
TAIL_LINES = 1_000
"""At most this many lines of the tail are shown after a skip (a person reads them)."""
MAX_LINE = 1024 * 1024
"""A longer line is not parsed (a note says how long it was)."""
HEAD = 4096
"""Bytes kept of a skipped or over-long line to find a tool result's id."""
CALLS_LIMIT = 200
CALLS_BYTES = 8 * 1024 * 1024
"""Open tool calls remembered to match their results: at most this many, and inputs of
about this many bytes (the oldest are forgotten first)."""
TEXT_LIMIT = 20_000
"""Characters of one transcript line passed on."""

_RESULT_ID = re.compile(rb'"tool_use_id"\s*:\s*"([A-Za-z0-9_\-]{1,200})"')
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(
    os, "O_CLOEXEC", 0)

ResultSeen = Callable[[str, dict[str, Any]], None]
"""Called with (tool name, tool input) when a tool call's result appears."""


def skipped_note(count: int) -> str:
    """The transcript line that stands for `count` lines not shown."""
    return f"… {count} line{'s' if count != 1 else ''} skipped"



class TranscriptReader:
    """Turns new lines of one transcript file into transcript events, a slice per poll.

    Args:
        path: the ``transcript_path`` the CLI reported (checked by the caller).
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
        self.offset = 0
        """Bytes of the file consumed so far."""
        self.size = 0
        """The file's size at the last poll."""
        self.reads = 0
        """Slices read so far (each within one loop turn)."""
        self.skipped = 0
        """Lines skipped so far (counted, never parsed)."""
        self._identity: tuple[int, int] | None = None
        self._skip_to: int | None = None
        self._skipping = 0
        self._partial = bytearray()
        self._dropping: bytes | None = None  # the head of an over-long line
        self._dropped = 0
        self._cut = False  # the rest of a line a skip ended in is dropped
        self._calls: dict[str, tuple[str, dict[str, Any], int]] = {}
        self._calls_bytes = 0
        self._line_size = 0
        self._pairing = ToolCallPairing()

    @property
    def behind(self) -> bool:
        """True while bytes the reader knows of are still unread."""
        return self.offset < self.size

    @property
    def skipping(self) -> bool:
        """True while a skip ahead is under way (counted a slice per poll)."""
        return self._skip_to is not None

    @property
    def buffered(self) -> int:
        """Bytes held of a line not complete yet (at most `MAX_LINE`)."""
        return len(self._partial)

    # -- reading -------------------------------------------------------------------------

    def poll(self) -> int:
        """Read one slice of what was appended; returns how many lines were read."""
        try:
            fd = os.open(self.path, _OPEN_FLAGS)
        except OSError:
            return 0
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                log.info("not reading %s: not a regular file of this user", self.path)
                return 0
            self._check_identity((info.st_dev, info.st_ino), info.st_size)
            self.size = info.st_size
            if self._skip_to is None and self.size - self.offset > BACKLOG_LIMIT:
                start = self._tail_start(fd)
                self._skip_to = start if start > self.offset else None
            if self._skip_to is not None:
                self._skip_to = min(self._skip_to, self.size)
                data = os.pread(fd, min(SKIP_SLICE, self._skip_to - self.offset), self.offset)
                self.reads += 1
                self.offset += len(data)
                self._skip(data)
                return 0
            if not self.behind:
                return 0
            data = os.pread(fd, min(SLICE, self.size - self.offset), self.offset)
            self.reads += 1
            self.offset += len(data)
            return self._feed(data)
        except OSError as exc:
            log.debug("could not read the transcript %s: %s", self.path, exc)
            return 0
        finally:
            os.close(fd)

    def _tail_start(self, fd: int) -> int:
        """Where the last `TAIL_LINES` lines start, within the last `TAIL` bytes."""
        start = max(0, self.size - TAIL)  # (a backlog in a file shorter than `TAIL` too)
        window = os.pread(fd, TAIL, start)
        end = len(window) - 1  # the file's own last newline ends the last line
        for _ in range(TAIL_LINES):
            end = window.rfind(b"\n", 0, end)
            if end < 0:
                return start
        return start + end + 1

    def _check_identity(self, identity: tuple[int, int], size: int) -> None:
        """Start over when the file was replaced or truncated."""
        if identity != self._identity or size < self.offset:
            if self._identity is not None:
                self.offset, self._partial, self._dropping = 0, bytearray(), None
                self._skip_to, self._skipping, self._cut = None, 0, False
            self._identity = identity

    def _skip(self, data: bytes) -> None:
        """Count the lines in `data` without parsing them; note the results among them."""
        self._skipping += data.count(b"\n")
        self._results_in(data)
        assert self._skip_to is not None
        if data and self.offset < self._skip_to:
            return
        self._partial, self._dropping = bytearray(), None
        self._cut = bool(data) and not data.endswith(b"\n")
        self._skipping += self._cut  # the line the skip ends in is not shown either
        self._skip_to = None
        self.skipped += self._skipping
        self._emit(TranscriptKind.SYSTEM, skipped_note(self._skipping))
        self._skipping = 0

    def _feed(self, data: bytes) -> int:
        buffer = self._partial + data
        start = count = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            line = bytes(buffer[start:end])
            start = end + 1
            count += 1
            if self._cut:
                self._cut = False
            elif self._dropping is not None:
                self._long_line(self._dropping + line[:HEAD], self._dropped + len(line))
            elif len(line) > MAX_LINE:
                self._long_line(line[:HEAD], len(line))
            elif line.strip():
                self._line(line)
            if count >= LINES_PER_POLL and buffer.find(b"\n", start) >= 0:
                # Enough for this turn: the rest (all of it in `data`) is read again.
                self.offset -= len(buffer) - start
                self._partial = bytearray()
                return count
        rest = buffer[start:]
        if self._cut:
            rest = bytearray()
        elif self._dropping is not None:
            if len(self._dropping) < HEAD:
                self._dropping += bytes(rest[:HEAD - len(self._dropping)])
            self._dropped += len(rest)
            rest = bytearray()
        elif len(rest) > MAX_LINE:
            self._dropping, self._dropped = bytes(rest[:HEAD]), len(rest)
            rest = bytearray()
        self._partial = rest
        return count

    def feed_line(self, raw: bytes, size: int | None = None) -> None:
        """Parse one whole line read elsewhere (a remote host's hook sends them) as a
        line read from the file; with `size`, `raw` is only the head of a line that
        long."""
        if (size is not None and size > len(raw)) or len(raw) > MAX_LINE:
            self._long_line(raw[:HEAD], size if size is not None else len(raw))
        elif raw.strip():
            self._line(raw)

    def note(self, text: str) -> None:
        """Add a line of the app's own (e.g. that earlier lines are not shown)."""
        self._emit(TranscriptKind.SYSTEM, text)

    def _long_line(self, head: bytes, size: int) -> None:
        """A line too long to parse: a note, or its result if it is one."""
        self._dropping, self._dropped = None, 0
        if not self._results_in(head, size):
            self._emit(TranscriptKind.SYSTEM, f"… a line of {size:,} bytes not shown")

    def _results_in(self, data: bytes, size: int | None = None) -> bool:
        """Pass on the results named in unparsed `data`; True if there was one."""
        if b"tool_result" not in data:
            return False
        found = False
        for match in _RESULT_ID.finditer(data):
            tool_use_id = match.group(1).decode()
            if tool_use_id not in self._calls:
                continue
            found = True
            if size is not None:
                self._emit(TranscriptKind.TOOL_RESULT,
                           f"… a result of {size:,} bytes, not shown", tool_use_id=tool_use_id)
            self._result_of(tool_use_id)
        return found

    def _result_of(self, tool_use_id: str) -> None:
        call = self._calls.pop(tool_use_id, None)
        if call is not None:
            self._calls_bytes -= call[2]
        if call is not None and self._on_result is not None:
            try:
                self._on_result(call[0], call[1])
            except Exception:
                log.exception("a transcript result handler failed")

    def _line(self, raw: bytes) -> None:
        self._line_size = len(raw)
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
            self._result_of(tool_use_id)

    def _assistant_block(self, block: dict[str, Any]) -> None:
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            self._emit(TranscriptKind.ASSISTANT_TEXT, str(block["text"]))
        elif block.get("type") == "tool_use":
            name = str(block.get("name", "")) or "?"
            raw_input = block.get("input")
            tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            tool_use_id = str(block.get("id", ""))
            if tool_use_id:
                self._remember(tool_use_id, name, tool_input)
            plan = tool_input.get("plan") if name == PLAN_TOOL else None
            details = plan[:TEXT_LIMIT] if isinstance(plan, str) and plan.strip() else ""
            # (a plan's line is its heading, as in app sessions; the plan under "details")
            self._emit(TranscriptKind.TOOL_CALL, summarize_call(name, tool_input),
                       tool_name=name, tool_use_id=tool_use_id or None, details=details)

    def _remember(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        """Keep a call to match its result, within `CALLS_LIMIT` and `CALLS_BYTES`."""
        old = self._calls.pop(tool_use_id, None)
        self._calls_bytes -= old[2] if old else 0
        self._calls[tool_use_id] = (name, tool_input, self._line_size)
        self._calls_bytes += self._line_size
        while len(self._calls) > CALLS_LIMIT or self._calls_bytes > CALLS_BYTES:
            _name, _input, size = self._calls.pop(next(iter(self._calls)))
            self._calls_bytes -= size

    def _emit(self, kind: TranscriptKind, text: str, **fields: Any) -> None:
        if len(text) > TEXT_LIMIT:
            text = f"{text[:TEXT_LIMIT]}… ({len(text) - TEXT_LIMIT:,} more characters)"
        try:
            self._on_event(self._pairing.pair(TranscriptEvent(
                session_id=self.session_id, kind=kind, text=text, **fields)))
        except Exception:
            log.exception("a transcript line could not be passed on")
