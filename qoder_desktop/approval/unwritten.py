"""Decisions the ledger could not write: kept in memory, written once the disk takes them.

With the database read-only or the disk full, the broker still fails closed (the agent
gets a deny), but the outcome is not lost: it waits here, in memory, and is written as
soon as a write succeeds again — right after the next decision that is written, and
otherwise every `RETRY_S` — so the request's "pending" row gets its outcome without a
restart. A row that already has an outcome is dropped (a request is answered once).
Quitting while some wait loses them (they are in memory only): the ledger keeps their
pending rows, which say the app ended before an outcome was written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass

from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.store.ledger import LedgerError

log = logging.getLogger(__name__)

RETRY_S = 5.0
"""How often kept decisions are tried again while no other write shows the way."""

WriteDecision = Callable[[ApprovalRequest, Decision, float, Future[None]], Awaitable[None]]
"""The ledger's `write_decision` (request, decision, latency, request_written)."""


@dataclass(frozen=True)
class Unwritten:
    """One decision the ledger could not write.

    Attributes:
        request: the request as it was answered.
        sent: what went back to the agent (a deny for every failed write, or the
            withdrawal), and what the ledger records once it can.
        by_person: True when it was a person's answer that could not be recorded.
        reason: why the write failed, in words (the storage error).
        latency_ms: time from arrival to answer.
    """

    request: ApprovalRequest
    sent: Decision
    by_person: bool
    reason: str
    latency_ms: float


def _written() -> Future[None]:
    done: Future[None] = Future()
    done.set_result(None)
    return done


class UnwrittenDecisions:
    """The decisions waiting for the ledger to take writes again, oldest first.

    `written` is called (on the loop) with each one once it is in the ledger.
    """

    def __init__(self, write: WriteDecision, written: Callable[[Unwritten], None]) -> None:
        self._write = write
        self._written = written
        self._items: dict[str, Unwritten] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    def items(self) -> list[Unwritten]:
        """What waits to be written, oldest first."""
        return list(self._items.values())

    def get(self, request_id: str) -> Unwritten | None:
        """The kept decision of `request_id`, if it waits."""
        return self._items.get(request_id)

    def keep(self, item: Unwritten) -> None:
        """Hold `item` until the ledger takes it (tried again every `RETRY_S`)."""
        self._items[item.request.request_id] = item
        self._schedule(RETRY_S)

    def retry_soon(self) -> None:
        """A write just succeeded: write what waits now (no-op when nothing does)."""
        if self._items:
            self._schedule(0.0)

    def close(self) -> None:
        """Stop trying (the app is quitting); what waits stays unwritten."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def _schedule(self, delay: float) -> None:
        if self._task is not None:
            return  # a run is on its way; it schedules the next one itself
        loop = asyncio.get_running_loop()
        if self._timer is not None:
            if delay > 0:
                return
            self._timer.cancel()
        self._timer = loop.call_later(delay, self._start)

    def _start(self) -> None:
        self._timer = None
        self._task = asyncio.get_running_loop().create_task(self._write_all())
        self._task.add_done_callback(self._ran)

    def _ran(self, task: asyncio.Task[None]) -> None:
        if self._task is task:
            self._task = None
        if not task.cancelled() and task.exception() is not None:
            log.error("writing kept decisions failed", exc_info=task.exception())
        if self._items and not task.cancelled():
            self._schedule(RETRY_S)

    async def _write_all(self) -> None:
        for request_id, item in list(self._items.items()):
            try:
                await self._write(item.request, item.sent, item.latency_ms, _written())
            except LedgerError:
                log.info("request %s already has an outcome in the ledger", request_id)
            except Exception as exc:
                log.info("the ledger still takes no writes (%s); %d decisions wait",
                         exc, len(self._items))
                return
            self._items.pop(request_id, None)
            log.info("wrote the kept decision of request %s", request_id)
            self._written(item)
