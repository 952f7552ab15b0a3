"""One approval's whole life in one object: `PendingApproval`.

The broker makes one for each request and keeps it while it waits; the dialog queue
(for the request's dialog) and the approvals controller (for its notification and tray
balloon) observe it and answer it, the window's queue and the tray's menu show the
broker's list of them, and none of them keeps a copy of the request's state. Built after
qutebrowser's question objects: a request is *asked*, then *shown* (its dialog is on
screen), and ends exactly once, *answered*, *withdrawn* or *timed out*:

    asked ──► shown ──► answered | withdrawn | timed out
      └────────────────►┘

A move the machine does not have (back to asked, out of an end, a second end) is
refused: `answer`, `withdraw` and `time_out` return False once the approval has ended
(the first end wins), `mark_shown` once it is no longer asked, and `_enter` raises
`IllegalTransition` for any other jump.

The ledger row, in this order, and nowhere else:

1. The request's row is queued on the ledger's writer thread exactly once, by the first
   of: `mark_shown()` (the dialog has painted: a writer thread running during the first
   frame shares the two cores and the interpreter with it); `ROW_HOLD_MAX_S` after a
   view said it will show the request (`hold_row_until_shown`); at once after ADDED when
   no view said so (`queue_row_unless_held`); the approval's end.
2. The outcome's row (`record`) is written once, after the end, and after the request's
   row (the ledger fails it when that row failed).
3. A request whose row fails is denied at once, if nothing answered it yet.

Qt-free: plain asyncio (observers are called synchronously on the loop; `answered()` and
`shown()` are awaitables).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    DecisionKind,
    PermissionSuggestion,
)

__all__ = ["ROW_HOLD_MAX_S", "ApprovalState", "IllegalTransition", "Ledger", "Observer",
           "PendingApproval", "PendingEvent"]

log = logging.getLogger(__name__)

ROW_HOLD_MAX_S = 0.25
"""The longest a view may hold a request's row back (a dialog that never paints)."""


class ApprovalState(StrEnum):
    """Where one approval is in its life."""

    ASKED = "asked"
    SHOWN = "shown"
    ANSWERED = "answered"
    WITHDRAWN = "withdrawn"
    TIMED_OUT = "timed_out"

    @property
    def is_final(self) -> bool:
        """True for the three ends (nothing moves it any more)."""
        return self in _ENDS


_ENDS = frozenset({ApprovalState.ANSWERED, ApprovalState.WITHDRAWN, ApprovalState.TIMED_OUT})
_MOVES: dict[ApprovalState, frozenset[ApprovalState]] = {
    ApprovalState.ASKED: _ENDS | {ApprovalState.SHOWN},
    ApprovalState.SHOWN: _ENDS,
    ApprovalState.ANSWERED: frozenset(),
    ApprovalState.WITHDRAWN: frozenset(),
    ApprovalState.TIMED_OUT: frozenset(),
}


class PendingEvent(StrEnum):
    """What an observer of a `PendingApproval` is told."""

    SHOWN = "shown"
    UPDATED = "updated"
    """Still waiting, with a newer state of the request (a rule granted meanwhile covers
    it): what its dialog and notification show changed."""
    ANSWERED = "answered"
    WITHDRAWN = "withdrawn"
    TIMED_OUT = "timed_out"


_EVENT_OF = {ApprovalState.SHOWN: PendingEvent.SHOWN,
             ApprovalState.ANSWERED: PendingEvent.ANSWERED,
             ApprovalState.WITHDRAWN: PendingEvent.WITHDRAWN,
             ApprovalState.TIMED_OUT: PendingEvent.TIMED_OUT}

Observer = Callable[["PendingApproval", PendingEvent], None]
"""Called synchronously with the approval and what just happened to it."""


class IllegalTransition(RuntimeError):
    """A move the approval's state machine does not have (e.g. out of an end)."""


class Ledger(Protocol):
    """Where every request and its outcome is written before the answer goes back.

    Both writes run off the event loop (the store's writer thread), in order.
    """

    def start_request(self, request: ApprovalRequest) -> Future[None]:
        """Queue the request's row (pending); the future ends once it is written."""
        ...

    async def write_decision(self, request: ApprovalRequest, decision: Decision,
                             latency_ms: float, *,
                             request_written: Future[None]) -> None:
        """Write a request's outcome, after its row (failing if that row failed)."""
        ...


class PendingApproval:
    """One request from asked to its end: state, answer, ledger row, observers.

    Attributes:
        request: the request as it is now (a newer state replaces it, see `update`).
        state: where it is (`ApprovalState`).
        decision: the end's decision (None while it waits): the person's answer, a
            deny rule's, a fail-closed error, the withdrawal or the time-out.
        sent: what went back to the agent, once the broker has recorded the end (a
            failed write turns an allow into a deny; a grant keeps only the updates
            the agent's SDK accepts).
        started: when it was asked (`time.monotonic()`); orders equal received times.
        row_written: ends once the request's ledger row is written (or failed).

    Lives on one event loop: `loop`, or the running one.
    """

    def __init__(self, request: ApprovalRequest, ledger: Ledger, *,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        loop = loop if loop is not None else asyncio.get_running_loop()
        self._loop = loop
        self._asked = request
        self.request = request
        self.state = ApprovalState.ASKED
        self.decision: Decision | None = None
        self.sent: Decision | None = None
        self.started = time.monotonic()
        self._ledger = ledger
        self._observers: list[Observer] = []
        self._ended: asyncio.Future[Decision] = loop.create_future()
        self._shown: asyncio.Future[None] = loop.create_future()
        self.row_written: Future[None] = Future()
        self._row_queued = False
        self._hold: asyncio.TimerHandle | None = None
        self._recorded = False
        asyncio.wrap_future(self.row_written, loop=loop).add_done_callback(
            self._deny_unrecorded)

    def __repr__(self) -> str:
        return (f"PendingApproval({self.request.request_id!r}, {self.request.tool_name!r}, "
                f"{self.state.value})")

    # -- what it holds -------------------------------------------------------------------

    @property
    def request_id(self) -> str:
        """The request's id (the same through every newer state)."""
        return self.request.request_id

    @property
    def received_at(self) -> datetime:
        """When the request arrived (the queue's first order)."""
        return self.request.received_at

    @property
    def reason(self) -> str:
        """Why it ended, in words (the decision's message; empty while it waits)."""
        return self.decision.message if self.decision is not None else ""

    @property
    def updates(self) -> tuple[PermissionSuggestion, ...]:
        """The rule updates to deliver with the answer: what the agent receives once
        the end is recorded (`sent`), else what the answer grants."""
        decision = self.sent or self.decision
        return tuple(decision.updates) if decision is not None else ()

    def is_waiting(self) -> bool:
        """True until it ends (asked or shown)."""
        return not self.state.is_final

    # -- observing -----------------------------------------------------------------------

    def observe(self, observer: Observer) -> Callable[[], None]:
        """Tell `observer` of every move from now on; returns a function that stops it."""
        self._observers.append(observer)

        def stop() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return stop

    async def answered(self) -> Decision:
        """Wait for the end (answered, withdrawn or timed out); its decision.

        Cancelling the wait does not end the approval."""
        return await asyncio.shield(self._ended)

    async def shown(self) -> None:
        """Wait until it was shown or ended (whichever comes first)."""
        await asyncio.shield(self._shown)

    def _tell(self, event: PendingEvent) -> None:
        for observer in list(self._observers):
            try:
                observer(self, event)
            except Exception:
                log.exception("an observer of request %s failed on %s", self.request_id, event)

    # -- moves ---------------------------------------------------------------------------

    def _enter(self, state: ApprovalState) -> None:
        if state not in _MOVES[self.state]:
            raise IllegalTransition(
                f"request {self.request_id}: no move from {self.state.value} to {state.value}")
        self.state = state

    def mark_shown(self) -> bool:
        """Its dialog is in front of the person (painted): shown, and the ledger row is
        queued now. False, and nothing changes, unless it was asked."""
        if self.state is not ApprovalState.ASKED:
            return False
        self._enter(ApprovalState.SHOWN)
        self.queue_row()
        self._shown.set_result(None)
        self._tell(PendingEvent.SHOWN)
        return True

    def update(self, request: ApprovalRequest) -> bool:
        """A newer state of the waiting request (a grant made meanwhile covers it); the
        observers show it. False once ended or for another request."""
        if self.state.is_final or request.request_id != self.request_id:
            return False
        self.request = request
        self._tell(PendingEvent.UPDATED)
        return True

    def answer(self, decision: Decision) -> bool:
        """Answer it (a person, a deny rule, a fail-closed error). The first end wins:
        False, and nothing changes, once it has ended.

        Raises:
            ValueError: `decision` is a withdrawal; use `withdraw`.
        """
        if decision.kind is DecisionKind.WITHDRAWN:
            raise ValueError("an answer cannot be 'withdrawn'; use withdraw()")
        return self._end(ApprovalState.ANSWERED, decision)

    def withdraw(self, reason: str = "") -> bool:
        """The agent or the app took it back; ignored (False) once it has ended."""
        return self._end(ApprovalState.WITHDRAWN, Decision.withdrawn(reason))

    def time_out(self, reason: str = "") -> bool:
        """Nobody answered in time: denied (fail closed); ignored once it has ended."""
        return self._end(ApprovalState.TIMED_OUT, Decision.error(
            reason or "Nobody answered this request in time, so it was denied."))

    def _end(self, state: ApprovalState, decision: Decision) -> bool:
        if self.state.is_final:
            return False
        self._enter(state)
        self.decision = decision
        self.queue_row()  # always before the outcome's row
        self._ended.set_result(decision)
        if not self._shown.done():
            self._shown.set_result(None)
        self._tell(_EVENT_OF[state])
        return True

    # -- the ledger row ------------------------------------------------------------------

    def hold_row_until_shown(self) -> bool:
        """A view shows this request now: its row waits for `mark_shown()`, at most
        `ROW_HOLD_MAX_S`. False when the row is already queued (nothing to hold)."""
        if self._row_queued or self.state is not ApprovalState.ASKED:
            return False
        if self._hold is None:
            self._hold = self._loop.call_later(ROW_HOLD_MAX_S, self.queue_row)
        return True

    def queue_row_unless_held(self) -> None:
        """After ADDED was told: queue the row now unless a view holds it."""
        if self._hold is None:
            self.queue_row()

    def queue_row(self) -> None:
        """Queue the request's ledger row (the first call only); a row that cannot even
        be queued is a failed write, never an exception."""
        if self._hold is not None:
            self._hold.cancel()
        if self._row_queued:
            return
        self._row_queued = True
        try:
            written = self._ledger.start_request(self._asked)
        except Exception as exc:
            written = Future()
            written.set_exception(exc)
        written.add_done_callback(self._copy_row)

    def _copy_row(self, written: Future[None]) -> None:
        problem = CancelledError() if written.cancelled() else written.exception()
        if problem is None:
            self.row_written.set_result(None)
        else:
            self.row_written.set_exception(problem)

    def _deny_unrecorded(self, written: asyncio.Future[None]) -> None:
        """A request whose row could not be written is denied now (its dialog closes)."""
        problem = None if written.cancelled() else written.exception()
        if problem is not None:
            self.answer(Decision.error(
                f"Qoder Desktop could not record the request, so it was denied: {problem}"))

    async def record(self, outcome: Decision, latency_ms: float) -> None:
        """Write `outcome` (the end's decision as it goes to the agent) as the outcome's
        row, once, after the request's; raises when the ledger cannot write it (the
        caller fails closed).

        Raises:
            IllegalTransition: it has not ended yet, or its outcome was recorded before.
        """
        if self.decision is None or self._recorded:
            raise IllegalTransition(
                f"request {self.request_id}: the outcome is written once, after the end")
        self._recorded = True
        self.queue_row()
        await self._ledger.write_decision(self.request, outcome, latency_ms,
                                          request_written=self.row_written)
