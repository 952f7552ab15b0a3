"""The gateway under abuse: a connection cap, a header timeout, rate-limited logging.

Uvicorn as such waits forever for a request's headers and accepts every connection, so
a local process that opens a thousand sockets and sends nothing (or half a request)
used up the app's file descriptors: real agents were locked out, and the loop logged
each failed ``accept()`` (tens of MB in seconds). Here:

- `ConnectionGuard` (with `guarded_http.GuardedH11Protocol`) keeps at most
  `MAX_CONNECTIONS` open. At the cap a new connection pushes out the oldest *idle* one
  (no request in progress: never an agent's pending call or event stream); when every
  connection is busy, the new one is closed.
- A connection that has not sent a complete request head within `HEADER_TIMEOUT`
  seconds (on arrival, or after it started the next request on a kept-alive
  connection) is closed; uvicorn's keep-alive timeout closes idle kept-alive ones.
- `RateLimitedLog` (shared with the terminal hook socket, `diagnostics.flood`) lets a
  burst of like log records through, then one summary line per window ("… N more like
  this"), on `FLOOD_LOGGERS`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from qoder_desktop.diagnostics.flood import RateLimitedLog, descriptor_budget

if TYPE_CHECKING:  # uvicorn loads with the HTTP stack, at the first agent connection
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from qoder_desktop.gateway.guarded_http import GuardedH11Protocol

__all__ = ["FLOOD_LOGGERS", "ConnectionGuard", "RateLimitedLog",
           "descriptor_budget", "gateway_log_limit"]

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 128
"""Open gateway connections at most (agents use a few each)."""
HEADER_TIMEOUT = 10.0
"""Seconds a connection may take to send a complete request head."""
ACCEPT_BATCH = 16
"""Connections the loop accepts per wake-up (uvicorn's ``backlog``; its default 2048 let
a flood be accepted faster than the cap could close it)."""
LISTEN_BACKLOG = 128
"""Connections the kernel queues for accepting (set again once uvicorn listens)."""
KEEP_ALIVE_TIMEOUT = 5
"""Seconds an idle kept-alive connection stays open (uvicorn's own timeout)."""
FLOOD_LOGGERS = ("uvicorn.error", "asyncio", "qasync", "qasync._QEventLoop",
                 "qoder_desktop.gateway.server", "qoder_desktop.gateway.http_stack",
                 "qoder_desktop.gateway.guarded_http", __name__)
"""Loggers that log once per bad connection or failed accept."""


def gateway_log_limit() -> RateLimitedLog:
    """The rate limit for the gateway's `FLOOD_LOGGERS` (install it while serving)."""
    return RateLimitedLog(loggers=FLOOD_LOGGERS)


class ConnectionGuard:
    """Counts the gateway's connections and decides which one goes at the cap.

    Attributes:
        evicted: idle connections closed to make room.
        refused: new connections closed because every open one was busy.
        timed_out: connections closed for not sending a request head in time.
    """

    def __init__(self, max_connections: int = MAX_CONNECTIONS,
                 header_timeout: float = HEADER_TIMEOUT) -> None:
        self.max_connections = min(max_connections, descriptor_budget(MAX_CONNECTIONS))
        self.header_timeout = header_timeout
        self._open: dict[GuardedH11Protocol, None] = {}  # insertion order: oldest first
        self.evicted = 0
        self.refused = 0
        self.timed_out = 0

    @property
    def open_connections(self) -> int:
        """How many connections are open now."""
        return len(self._open)

    def connections(self) -> list[GuardedH11Protocol]:
        """The open connections, oldest first."""
        return list(self._open)

    def opened(self, connection: GuardedH11Protocol) -> bool:
        """Register a new connection; False when it must be closed at once."""
        if len(self._open) >= self.max_connections:
            victim = next((c for c in self._open if c.idle), None)
            if victim is None:
                self.refused += 1
                log.warning("approval gateway: %d connections, all busy; refused one from "
                            "%s", len(self._open), connection.peer)
                return False
            self.evicted += 1
            log.warning("approval gateway: at %d connections; closed the oldest idle one "
                        "(from %s)", self.max_connections, victim.peer)
            self.closed(victim)
            victim.drop()
        self._open[connection] = None
        return True

    def closed(self, connection: GuardedH11Protocol) -> None:
        """Forget a connection."""
        self._open.pop(connection, None)

    def protocol(self) -> type[H11Protocol]:
        """The uvicorn HTTP protocol class bound to this guard (uvicorn's ``http``)."""
        from qoder_desktop.gateway.guarded_http import GuardedH11Protocol

        return type("BoundGuardedH11Protocol", (GuardedH11Protocol,), {"guard": self})
