"""The hook's own look at its session's transcript, for a desk that cannot read it.

A remote host's hook runs where the transcript is; the desk does not. While the hook
waits for the desk, it follows the ``transcript_path`` the CLI gave it, so that when the
person answers in the terminal (the CLI writes the call's ``tool_result``) the hook can
take the desk's dialog back at once, as the app does for a local terminal. When the
desk asks (`stream_from`), it also passes on the lines the desk shows: the last
`STREAM_RECENT` lines before it started and what is appended while it waits, each with
where it starts in the file (a line over `STREAM_LINE` bytes only as its head), at most
`PENDING_LIMIT` waiting to be sent (the oldest go first).

The hook has no tool-use id on its stdin: its call is the latest ``tool_use`` in the
transcript with the request's tool name and input that has no result yet (the CLI
writes it just before it runs the hook). Reading is bounded: only the tail from shortly
before the hook started (`LOOKBACK` bytes), in reads of at most `SLICE` bytes, at most
`POLL_BYTES` per poll; a line longer than `MAX_LINE` is never held whole, only its head
(enough to find a result's id). The file is opened without following a symlink and read
only while it is a regular file of this user named for the session.

Stdlib only and Python 3.8: the standalone hook on a remote host embeds this module.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import deque
from typing import Any

LOOKBACK = 256 * 1024
"""Bytes before the hook started that are read to find its call."""
SLICE = 64 * 1024
"""Bytes read at once."""
POLL_BYTES = 256 * 1024
"""Bytes read per poll at most (a file growing faster is read over several polls)."""
MAX_LINE = 1024 * 1024
"""A longer line is not parsed: only its `HEAD` is kept."""
HEAD = 4096
STREAM_RECENT = 50
"""Lines before the hook started that are passed on (the desk shows the rest as a gap)."""
STREAM_LINE = 256 * 1024
"""A longer line is passed on as its head and its size."""
PENDING_LIMIT = 500
"""Lines waiting to be passed on at most."""
MESSAGE_LINES = 200
MESSAGE_BYTES = 1024 * 1024
"""Lines and bytes (as sent) passed on in one message at most (see `take_lines`); with
one more line of `STREAM_LINE` bytes, escaped, a message stays below the protocol's
4 MiB line limit."""
FINISHED_LIMIT = 1000
"""Tool-use ids with a result remembered (so an earlier identical call is not ours)."""

_RESULT_ID = re.compile(rb'"tool_use_id"\s*:\s*"([A-Za-z0-9_\-]{1,200})"')
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(
    os, "O_CLOEXEC", 0)


def transcript_of(event: dict[str, Any]) -> str | None:
    """The hook input's transcript path when it is one the CLI writes for this session
    (``…/projects/<folder>/<session id>.jsonl``, absolute), else None."""
    path = event.get("transcript_path")
    session_id = event.get("session_id")
    if not isinstance(path, str) or not isinstance(session_id, str) or not session_id:
        return None
    if not os.path.isabs(path) or os.path.normpath(path) != path or "/" in session_id:
        return None
    folder, name = os.path.split(path)
    if name != session_id + ".jsonl" or os.path.basename(os.path.dirname(folder)) != "projects":
        return None
    return path


def size_now(path: str | None) -> int | None:
    """The transcript's size now (when the hook starts: what is written later is new),
    or None when there is no such file."""
    if path is None:
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


class TranscriptWatch:
    """Follows one transcript for the result of the hook's own call.

    Args:
        path: the transcript (see `transcript_of`).
        tool_name, tool_input: the call the hook asks about.
        started_at: the file's size when the hook started (`size_now`): a result after
            it is an answer given while the hook waited; one before it belongs to an
            earlier identical call. None: the size when the watch starts.
        stream_from: keep the lines that start at or after this offset for the desk
            (`take_lines`); None: keep none.
    """

    def __init__(self, path: str, tool_name: str, tool_input: dict[str, Any],
                 started_at: int | None = None, stream_from: int | None = None) -> None:
        self.path = path
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.call_id: str | None = None
        """The tool-use id of the hook's call, once found."""
        self.answered = False
        """The call's result was written: the person answered in the terminal."""
        self.offset = 0
        self.bytes_read = 0
        """Bytes read from the file so far (never the whole of a long history)."""
        self._identity: tuple[int, int] | None = None
        self._partial = b""
        self._dropping: bytes | None = None  # the head of an over-long line
        self._finished: list[str] = []
        self._following = False
        self._stream_from = stream_from
        self._pending: deque[tuple[int, bytes, int]] = deque(maxlen=STREAM_RECENT)
        self._dropping_at = 0
        self._cut = False  # the rest of a line the window starts in is skipped
        size = self._size()
        if size is None:
            return
        start = size if started_at is None else min(started_at, size)
        self.offset = max(0, start - LOOKBACK)
        self._cut = self.offset > 0
        while self.offset < start:
            if not self._read(start):
                break
        self._following = True
        self._pending = deque(self._pending, maxlen=PENDING_LIMIT)

    def _open(self) -> int | None:
        try:
            fd = os.open(self.path, _OPEN_FLAGS)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
        except OSError:
            os.close(fd)
            return None
        identity = (info.st_dev, info.st_ino)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid()
                or (self._identity is not None and identity != self._identity)):
            os.close(fd)
            return None
        self._identity = identity
        return fd

    def _size(self) -> int | None:
        fd = self._open()
        if fd is None:
            return None
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def poll(self) -> bool:
        """Read what was appended (at most `POLL_BYTES`); True once the call's result
        appeared."""
        if self.answered or not self._following:
            return self.answered
        size = self._size()
        budget = POLL_BYTES
        while size is not None and self.offset < size and budget > 0 and not self.answered:
            read = self._read(size)
            if not read:
                break
            budget -= read
        return self.answered

    def _read(self, size: int) -> int:
        """Read one slice up to `size`; returns the bytes read."""
        fd = self._open()
        if fd is None:
            return 0
        try:
            data = os.pread(fd, min(SLICE, size - self.offset), self.offset)
        except OSError:
            return 0
        finally:
            os.close(fd)
        self.offset += len(data)
        self.bytes_read += len(data)
        self._feed(data)
        return len(data)

    def take_lines(self) -> list[dict[str, Any]]:
        """The next lines for the desk (at most `MESSAGE_LINES`, about `MESSAGE_BYTES`):
        ``{"at": offset, "size": its length, "text": line}``, and ``"cut": true`` for
        a line over `STREAM_LINE` bytes, of which only the head is sent."""
        taken: list[dict[str, Any]] = []
        used = 0
        while self._pending and len(taken) < MESSAGE_LINES and used < MESSAGE_BYTES:
            at, raw, size = self._pending.popleft()
            text = raw.decode("utf-8", errors="replace")
            line = {"at": at, "size": size, "text": text}
            if size != len(raw):
                line["cut"] = True
            taken.append(line)
            # As sent (escapes included): a message stays far below the app's line limit.
            used += len(json.dumps(text, ensure_ascii=False))
        return taken

    def _keep(self, at: int, raw: bytes, size: int) -> None:
        """Keep a line (or the head of a long one) for the desk."""
        if self._stream_from is None or at < self._stream_from:
            return
        if size > STREAM_LINE:
            raw = raw[:HEAD]
        self._pending.append((at, raw, size))

    def _feed(self, data: bytes) -> None:
        buffer = self._partial + data
        base = self.offset - len(buffer)  # where `buffer` starts in the file
        start = 0
        while True:
            end = buffer.find(b"\n", start)
            if end < 0:
                break
            line, at = buffer[start:end], base + start
            start = end + 1
            if self._cut:
                self._cut = False
            elif self._dropping is not None:
                head, self._dropping = self._dropping + line[:HEAD], None
                self._results(head)
                self._keep(self._dropping_at, head, base + end - self._dropping_at)
            elif len(line) > MAX_LINE:
                self._results(line[:HEAD])
                self._keep(at, line[:HEAD], len(line))
            else:
                self._line(line)
                if line.strip():
                    self._keep(at, line, len(line))
        rest = buffer[start:]
        if self._cut:
            rest = b""
        elif self._dropping is not None:
            self._dropping += rest[:max(0, HEAD - len(self._dropping))]
            rest = b""
        elif len(rest) > MAX_LINE:
            self._dropping, self._dropping_at, rest = rest[:HEAD], base + start, b""
        self._partial = rest

    def _results(self, head: bytes) -> None:
        """The results named in the head of a line too long to parse."""
        if b"tool_result" in head:
            for match in _RESULT_ID.finditer(head):
                self._result(match.group(1).decode())

    def _line(self, raw: bytes) -> None:
        if b'"tool_use"' not in raw and b'"tool_result"' not in raw:
            return
        try:
            entry = json.loads(raw)
        except ValueError:
            return
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list) or entry.get("isSidechain"):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and entry.get("type") == "assistant":
                tool_use_id = block.get("id")
                if (isinstance(tool_use_id, str) and tool_use_id not in self._finished
                        and block.get("name") == self.tool_name
                        and block.get("input") == self.tool_input):
                    self.call_id = tool_use_id
            elif block.get("type") == "tool_result" and entry.get("type") == "user":
                self._result(str(block.get("tool_use_id", "")))

    def _result(self, tool_use_id: str) -> None:
        if tool_use_id == self.call_id:
            if self._following:
                self.answered = True
            else:  # answered before the hook started: an earlier identical call
                self.call_id = None
        self._finished.append(tool_use_id)
        if len(self._finished) > FINISHED_LIMIT:
            del self._finished[0]
