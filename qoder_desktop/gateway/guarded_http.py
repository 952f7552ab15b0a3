"""Uvicorn's h11 protocol under a `limits.ConnectionGuard`: the connection cap and a
deadline for request heads (see `limits`). Loaded with the HTTP stack."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from qoder_desktop.gateway.limits import ConnectionGuard

log = logging.getLogger(__name__)


class GuardedH11Protocol(H11Protocol):
    """Uvicorn's h11 protocol with the guard's cap and a deadline for request heads."""

    guard: ConnectionGuard

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._armed_cycle: Any = None
        self._dropped = False

    @property
    def idle(self) -> bool:
        """No request in progress (none yet, or the last one was answered)."""
        return self.cycle is None or bool(self.cycle.response_complete)

    @property
    def peer(self) -> str:
        """The client's address, for log lines."""
        client = getattr(self, "client", None)
        return f"{client[0]}:{client[1]}" if client else "?"

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection (closing it at once if the cap says so); arm the deadline."""
        super().connection_made(transport)
        if not self.guard.opened(self):
            self.drop()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        """A new request head on an idle connection must complete in time."""
        if self._head_timer is None and self.idle and not self._dropped:
            self._arm()
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection and its deadline."""
        self.guard.closed(self)
        self._disarm()
        super().connection_lost(exc)

    def drop(self) -> None:
        """Close the connection now (no response: the client never finished asking)."""
        self._dropped = True
        self._disarm()
        self.transport.close()

    def _arm(self) -> None:
        self._armed_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.guard.header_timeout, self._deadline)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _deadline(self) -> None:
        self._head_timer = None
        if self._dropped or not self.idle:
            return  # a request is in progress; the next data on an idle connection re-arms
        if self.cycle is not self._armed_cycle:
            self._arm()  # a request came and went in the meantime: a new deadline
            return
        self.guard.timed_out += 1
        log.info("approval gateway: closed a connection from %s that sent no complete "
                 "request in %.0f s", self.peer, self.guard.header_timeout)
        self.guard.closed(self)
        self.drop()
