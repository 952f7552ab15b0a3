"""Which ended sessions the hub still lists: the `ENDED_SESSIONS_KEPT` that ended last.

People leave the app running for days; a session list that keeps every session that
ever ran grows without end (memory, and a list nobody can use). The hub keeps every
running session and the ended ones that ended last; an older ended session is
forgotten (its row, its info and its transcript tail), unless a request of it still
waits for a person: that one stays until its request is answered or withdrawn. What
was forgotten stays where it always was: every request and decision in the ledger
(SQLite), which View → History reads, and a terminal agent's transcript file on disk.
"""

from __future__ import annotations

from collections.abc import Container

from qoder_desktop.domain.models import SessionState

ENDED = (SessionState.STOPPED, SessionState.FAILED)
"""States of a session that has ended."""

ENDED_SESSIONS_KEPT = 50
"""Ended sessions the hub lists (those that ended last); older ones are in History."""


class EndedSessions:
    """The ended sessions in the order they ended, and which of them to forget."""

    def __init__(self, limit: int = ENDED_SESSIONS_KEPT) -> None:
        self._limit = limit
        self._order: dict[str, None] = {}
        """Ended sessions, the one that ended longest ago first."""
        self.forgotten = 0
        """How many ended sessions were forgotten in this run."""

    def ended(self, session_id: str) -> None:
        """The session ended (again: it becomes the one that ended last)."""
        self._order.pop(session_id, None)
        self._order[session_id] = None

    def resumed(self, session_id: str) -> None:
        """The session runs again (a terminal session resumed in a new CLI)."""
        self._order.pop(session_id, None)

    def over_limit(self) -> bool:
        """True while more ended sessions are listed than are kept."""
        return len(self._order) > self._limit

    def to_forget(self, waiting: Container[str]) -> list[str]:
        """The ended sessions beyond the limit, the one that ended longest ago first,
        except those in `waiting` (a request of theirs waits for a person); they are
        counted as forgotten."""
        excess = len(self._order) - self._limit
        chosen: list[str] = []
        for session_id in self._order:
            if len(chosen) >= excess:
                break
            if session_id not in waiting:
                chosen.append(session_id)
        for session_id in chosen:
            del self._order[session_id]
        self.forgotten += len(chosen)
        return chosen
