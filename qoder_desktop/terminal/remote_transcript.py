"""The desk's side of a remote host's transcript: lines its hook streams, shown under
that host's session.

The desk cannot read a remote host's files. While a remote hook waits for the desk it
follows its session's transcript (`transcript_watch`) and sends the recent lines and
what is appended, each with where it starts in the file. Here they are parsed exactly as
the local follower parses lines it reads itself (`TranscriptFollower.feed_line`), into
the session the hook's own socket and binding gave the request, never another: a host
can only add lines to its own sessions. Each session remembers how far it was shown, so
the lines several hooks of one session send are shown once; `shown_up_to` is what the
desk tells the next hook, so it sends only what is new.

Bounded: at most `LINES_PER_MESSAGE` lines of at most `protocol.MAX_LINE` bytes per
message (the connection's own limit), and the followers' own limits on what they keep.
Qt-free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qoder_desktop.domain.session_options import TranscriptEvent
from qoder_desktop.terminal.transcript import TranscriptFollower

log = logging.getLogger(__name__)

LINES_PER_MESSAGE = 500
"""Lines taken from one message at most (the hook sends 200)."""
GAP_NOTE = "… earlier lines not shown"


@dataclass
class _Shown:
    """One session's streamed transcript: its parser and how far it was shown."""

    follower: TranscriptFollower
    end: int = 0


class RemoteTranscripts:
    """The transcripts remote hooks stream, per app session (see the module docstring).

    Args:
        on_event: receives each transcript line (the hub's ``add_transcript_line``).
    """

    def __init__(self, on_event: Callable[[TranscriptEvent], None]) -> None:
        self._on_event = on_event
        self._sessions: dict[str, _Shown] = {}

    def shown_up_to(self, session_id: str) -> int:
        """Where in its transcript file session `session_id` was shown up to (what the
        next hook of the session sends from)."""
        shown = self._sessions.get(session_id)
        return shown.end if shown is not None else 0

    def forget(self, session_id: str) -> None:
        """The hub forgot the session: nothing of its transcript is kept here."""
        self._sessions.pop(session_id, None)

    def take(self, session_id: str, lines: Any) -> int:
        """Show the `lines` of one ``transcript`` message under `session_id`; returns
        how many were new (lines already shown, or not in the protocol's form, are
        dropped)."""
        if not isinstance(lines, list):
            return 0
        shown = self._sessions.get(session_id)
        if shown is None:
            shown = _Shown(TranscriptFollower("", session_id, self._on_event))
            self._sessions[session_id] = shown
        count = 0
        for item in lines[:LINES_PER_MESSAGE]:
            line = _line(item)
            if line is None or line[0] < shown.end:
                continue
            at, raw, size, cut = line
            if at > shown.end:
                shown.follower.note(GAP_NOTE)
            shown.follower.feed_line(raw, size if cut else None)
            shown.end = at + size + 1
            count += 1
        return count


def _line(item: Any) -> tuple[int, bytes, int, bool] | None:
    """(where it starts, its text, its length in the file, whether only its head came)
    of one streamed line; None when it is not in the protocol's form."""
    if not isinstance(item, dict):
        return None
    at, text, size = item.get("at"), item.get("text"), item.get("size")
    if not all(isinstance(value, int) and not isinstance(value, bool) and value >= 0
               for value in (at, size)) or not isinstance(text, str):
        return None
    assert isinstance(at, int) and isinstance(size, int)
    return at, text.encode("utf-8"), size, item.get("cut") is True
