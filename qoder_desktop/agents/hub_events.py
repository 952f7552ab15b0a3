"""What the session hub tells the rest of the app, and the fan-out that delivers it.

The hub publishes every change as a `HubEvent` to its subscribers (the UI through the
app wiring, the terminal server); it knows none of them. One subscriber that fails is
logged and does not keep the event from the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from qoder_desktop.domain.models import SessionInfo, SessionRule
from qoder_desktop.domain.session_options import TranscriptEvent

log = logging.getLogger(__name__)


class HubEventKind(StrEnum):
    """What changed in the hub."""

    SESSION = "session"
    FORGOTTEN = "forgotten"
    TRANSCRIPT = "transcript"
    RULES = "rules"
    NOTICE = "notice"


@dataclass(frozen=True)
class HubEvent:
    """One change: a session's info, an ended session no longer listed (FORGOTTEN; see
    `ended_sessions`), a transcript line, a session's rules (all of them, revoked ones
    included), or a notice for the person (`text`, e.g. a failure)."""

    kind: HubEventKind
    session_id: str
    session: SessionInfo | None = None
    line: TranscriptEvent | None = None
    rules: tuple[SessionRule, ...] = ()
    text: str = ""


class HubSubscribers:
    """The hub's subscribers, each told every event in the order they subscribed."""

    def __init__(self) -> None:
        self._subscribers: list[Callable[[HubEvent], None]] = []

    def subscribe(self, subscriber: Callable[[HubEvent], None]) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it again."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def publish(self, event: HubEvent) -> None:
        """Tell every subscriber; one that fails is logged and the others still hear it."""
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                log.exception("a hub subscriber failed on %s", event.kind)
