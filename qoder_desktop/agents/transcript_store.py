"""The transcript lines the hub keeps: the one copy of every session's transcript in memory.

A running session keeps its newest `TRANSCRIPT_LIMIT` lines. Once it has ended it keeps
a tail of `ENDED_TAIL` lines, and all ended sessions together keep at most `ENDED_LINES`
(the sessions that ended longest ago give theirs up first), so a week of sessions does
not grow the app without bound. What is no longer kept is said in one line at the top
of the session's transcript; every decision stays in the ledger (SQLite), which the
history window reads, and a terminal agent's own transcript file stays on disk. A
session the hub forgets (see `ended_sessions`) keeps nothing here.
The window shows what it is given here and keeps no copy.
"""

from __future__ import annotations

import collections

from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind

TRANSCRIPT_LIMIT = 5_000
"""Lines a running session keeps; older ones are dropped first."""
ENDED_TAIL = 200
"""Lines an ended session keeps (its newest)."""
ENDED_LINES = 2_000
"""Lines all ended sessions keep together."""


def not_kept_note(count: int) -> str:
    """The line that stands for `count` lines no longer kept."""
    return (f"… {count:,} earlier line{'s' if count != 1 else ''} no longer kept here; "
            "every decision is in View → History")


def _replaced_call(lines: collections.deque[TranscriptEvent],
                   event: TranscriptEvent) -> int | None:
    """Where the call an edited call line replaces is (None: append it)."""
    if event.kind is not TranscriptKind.TOOL_CALL or event.original_text is None:
        return None
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if line.kind is TranscriptKind.TOOL_CALL and line.tool_use_id == event.tool_use_id:
            return index
    return None


class Transcripts:
    """Every session's transcript lines, within the limits above."""

    def __init__(self, limit: int = TRANSCRIPT_LIMIT, ended_tail: int = ENDED_TAIL,
                 ended_lines: int = ENDED_LINES) -> None:
        self._limit = limit
        self._ended_tail = ended_tail
        self._ended_budget = ended_lines
        self._lines: dict[str, collections.deque[TranscriptEvent]] = {}
        self._not_kept: dict[str, int] = {}
        self._ended: dict[str, None] = {}
        """Ended sessions, the one that ended longest ago first."""
        self._ended_lines = 0

    def lines(self, session_id: str) -> list[TranscriptEvent]:
        """The session's transcript as kept, after a line saying what is not."""
        kept = list(self._lines.get(session_id, ()))
        dropped = self._not_kept.get(session_id, 0)
        if not dropped:
            return kept
        note = TranscriptEvent(session_id=session_id, kind=TranscriptKind.SYSTEM,
                               text=not_kept_note(dropped))
        if kept:
            note = note.model_copy(update={"at": kept[0].at})
        return [note, *kept]

    def kept(self) -> int:
        """Lines kept over all sessions."""
        return sum(len(lines) for lines in self._lines.values())

    def add(self, event: TranscriptEvent) -> None:
        """Keep a line; an edited call replaces the line of the call it names."""
        session_id = event.session_id
        lines = self._lines.get(session_id)
        if lines is None:
            lines = self._lines[session_id] = collections.deque()
        at = _replaced_call(lines, event)
        if at is not None:
            lines[at] = event
            return
        lines.append(event)
        if session_id in self._ended:
            self._ended_lines += 1
            self._trim(session_id, self._ended_tail)
            self._within_budget(keep=session_id)
        else:
            self._trim(session_id, self._limit)

    def ended(self, session_id: str) -> None:
        """The session ended: it keeps its tail, within what ended sessions keep."""
        if session_id in self._ended:
            return
        self._ended[session_id] = None
        self._ended_lines += len(self._lines.get(session_id, ()))
        self._trim(session_id, self._ended_tail)
        self._within_budget(keep=session_id)

    def resumed(self, session_id: str) -> None:
        """The session runs again (a terminal session resumed in a new CLI)."""
        if session_id in self._ended:
            del self._ended[session_id]
            self._ended_lines -= len(self._lines.get(session_id, ()))

    def forget(self, session_id: str) -> None:
        """The hub no longer lists the session: nothing of its transcript is kept."""
        lines = self._lines.pop(session_id, None)
        self._not_kept.pop(session_id, None)
        if session_id in self._ended:
            del self._ended[session_id]
            self._ended_lines -= len(lines) if lines is not None else 0

    def _trim(self, session_id: str, limit: int) -> None:
        lines = self._lines.get(session_id)
        if lines is None or len(lines) <= limit:
            return
        extra = len(lines) - limit
        for _ in range(extra):
            lines.popleft()
        self._not_kept[session_id] = self._not_kept.get(session_id, 0) + extra
        if session_id in self._ended:
            self._ended_lines -= extra

    def _within_budget(self, keep: str) -> None:
        """Give up the lines of the sessions that ended longest ago (never `keep`'s)."""
        for session_id in list(self._ended):
            if self._ended_lines <= self._ended_budget:
                return
            if session_id != keep:
                self._trim(session_id, 0)
