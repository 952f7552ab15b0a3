"""The approval broker: one queue for every session's requests, oldest first.

A backend adapter calls `await broker.request(req)` from inside the SDK's
`can_use_tool` callback (the gateway and the terminal hook server likewise). The
broker first asks the session rules; if none decides, it queues the request, tells its
subscribers (the UI) and waits for `answer()`. Each request is answered exactly once.
If the awaiting task is cancelled (the agent withdrew the request), the request is
recorded as withdrawn and subscribers hear of it at once. Any error on the way is a
deny with a message: the broker fails closed.

Only a person or the agent's CLI allows. The session rules here never do: a deny rule
decides; an allow rule only tells the person which rule covers an escalated call; and a
grant made while other requests of its session wait denies those its deny rules cover
and marks those its allow rules cover ("covered by your new rule", subscribers hear
UPDATED), which then wait for the person like any other. The reasons are in
`approval/rule_decisions.py`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from qoder_desktop.approval import row_write
from qoder_desktop.approval.row_write import Presenter, RowWrite
from qoder_desktop.approval.rule_decisions import (
    RuleStore,
    UpdateCheck,
    decide_by_rule,
    deliverable_grant,
    sibling_outcome,
)
from qoder_desktop.approval.unwritten import Unwritten, UnwrittenDecisions
from qoder_desktop.domain.models import (
    ApprovalRequest,
    DecidedBy,
    Decision,
    DecisionKind,
    SessionRule,
)
from qoder_desktop.rules import grants

__all__ = ["AlreadyAnswered", "ApprovalBroker", "BrokerEvent", "Ledger", "RuleStore",
           "Subscriber", "Unwritten", "UpdateCheck"]

log = logging.getLogger(__name__)


class BrokerEvent(StrEnum):
    """What happened to a request, as told to subscribers."""

    ADDED = "added"
    UPDATED = "updated"
    ANSWERED = "answered"
    WITHDRAWN = "withdrawn"
    UNRECORDED = "unrecorded"
    RECORDED_LATE = "recorded_late"


Subscriber = Callable[[BrokerEvent, ApprovalRequest, Decision | None], None]
"""Called synchronously with (event, request, decision); decision is None for ADDED and
UPDATED (the request, still waiting, as it is now). UNRECORDED and RECORDED_LATE carry
the decision the agent got (see `ApprovalBroker.unwritten`)."""


class Ledger(Protocol):
    """Where every request and its outcome is written before the answer goes back.

    Both writes run off the event loop (the store's writer thread), in order. The broker
    asks the person while the request's row is written (queued once the dialog has
    painted, see `ApprovalBroker.set_presenter`) and awaits the decision's write (which
    fails if the request's did) before the answer goes back to the agent.
    """

    def start_request(self, request: ApprovalRequest) -> Future[None]:
        """Queue the request's row (pending); the future ends once it is written."""
        ...

    async def write_decision(self, request: ApprovalRequest, decision: Decision,
                             latency_ms: float, *,
                             request_written: Future[None]) -> None:
        """Write a request's outcome, after its row (failing if that row failed)."""
        ...


class AlreadyAnswered(RuntimeError):
    """A second answer for a request that was already answered or withdrawn."""


@dataclass
class _Pending:
    request: ApprovalRequest
    future: asyncio.Future[Decision]
    started: float = field(default_factory=time.monotonic)


def _age(entry: _Pending) -> tuple[datetime, float]:
    """The queue's order: received first, then queued first."""
    return entry.request.received_at, entry.started


class ApprovalBroker:
    """Queues approval requests from all sessions and hands out their decisions.

    Signals (as subscriber events):
        ADDED: a request waits for a person.
        UPDATED: a waiting request changed (a new grant covers it), still waiting.
        ANSWERED: a request got its decision (by a person, a deny rule or an error).
        WITHDRAWN: the agent or the app took the request back before an answer.
        UNRECORDED: the ledger could not write a request's outcome (the disk is full,
            the database read-only): the call was denied, and the outcome is kept in
            memory (`unwritten`). Comes before that request's ANSWERED.
        RECORDED_LATE: a kept outcome is now written (the disk takes writes again).
    """

    def __init__(self, rule_store: RuleStore, ledger: Ledger) -> None:
        self._rule_store = rule_store
        self._ledger = ledger
        self._pending: dict[str, _Pending] = {}
        self._order: list[_Pending] | None = []
        """`_pending`'s entries oldest first (None: to be sorted again); kept up to date
        as requests come and go, so `pending()` does not sort a long queue each time."""
        self._subscribers: list[Subscriber] = []
        self._presenter: Presenter | None = None
        self._unwritten = UnwrittenDecisions(
            lambda request, decision, latency, written: ledger.write_decision(
                request, decision, latency, request_written=written),
            lambda item: self._notify_quietly(BrokerEvent.RECORDED_LATE, item.request,
                                              item.sent))

    # -- subscribers -------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it again."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def set_presenter(self, presenter: Presenter | None) -> None:
        """Let `presenter` hold a new request's ledger row until its dialog has painted
        (see `row_write.Presenter`; never longer than `ROW_HOLD_MAX_S`)."""
        self._presenter = presenter

    def _notify(self, event: BrokerEvent, request: ApprovalRequest,
                decision: Decision | None) -> None:
        for subscriber in list(self._subscribers):
            subscriber(event, request, decision)

    def _notify_quietly(self, event: BrokerEvent, request: ApprovalRequest,
                        decision: Decision | None) -> None:
        """Notify, logging (not raising) subscriber errors: the answer is already fixed."""
        try:
            self._notify(event, request, decision)
        except Exception:
            log.exception("a subscriber failed on %s of request %s", event, request.request_id)

    # -- queries -----------------------------------------------------------------------

    def pending(self) -> list[ApprovalRequest]:
        """Requests waiting for a person, oldest first."""
        entries = self._order
        if entries is None:
            entries = self._order = sorted(self._pending.values(), key=_age)
        return [entry.request for entry in entries if not entry.future.done()]

    def _add_pending(self, entry: _Pending) -> None:
        replaced = self._pending.get(entry.request.request_id)
        self._pending[entry.request.request_id] = entry
        order = self._order
        if replaced is None and order is not None and (not order
                                                       or _age(order[-1]) <= _age(entry)):
            order.append(entry)  # the usual: the newest comes last (as a stable sort has it)
        else:
            self._order = None

    def _drop_pending(self, request_id: str) -> None:
        entry = self._pending.pop(request_id, None)
        order = self._order
        if entry is None or order is None:
            return
        if order and order[0] is entry:  # answered oldest first
            del order[0]
            return
        for index in range(len(order) - 1, -1, -1):
            if order[index] is entry:
                del order[index]
                return
        self._order = None

    def unwritten(self) -> list[Unwritten]:
        """Outcomes the ledger could not write yet, oldest first (kept in memory)."""
        return self._unwritten.items()

    def unwritten_of(self, request_id: str) -> Unwritten | None:
        """The kept outcome of `request_id` while it waits to be written."""
        return self._unwritten.get(request_id)

    def close(self) -> None:
        """Stop trying to write kept outcomes (the app is quitting)."""
        self._unwritten.close()

    def is_pending(self, request_id: str) -> bool:
        """True while `request_id` waits for an answer."""
        entry = self._pending.get(request_id)
        return entry is not None and not entry.future.done()

    # -- the path of one request -------------------------------------------------------

    async def request(self, request: ApprovalRequest,
                      deliverable: UpdateCheck | None = None) -> Decision:
        """Decide `request`: by a session rule, or by a person through the queue.

        Args:
            request: the call to decide.
            deliverable: checks each update an "allow for this session" would send, the
                way the agent's SDK will (a failing update is dropped with a log line, so
                only what the CLI receives is granted and recorded). None accepts every
                update the grant policy allows.

        Never raises except `CancelledError` (after recording the request as withdrawn);
        every other failure becomes a deny with a message.
        """
        started = time.monotonic()
        if request.request_id in self._pending:
            log.warning("duplicate request id %s refused", request.request_id)
            return Decision.error(
                "Qoder Desktop refused a duplicate permission request (the same id is already "
                "waiting for an answer).")
        # The request's row is written while the person looks at it: the dialog does
        # not wait for the disk (nor share the CPU with it before its first frame); a
        # request the ledger cannot hold is denied as soon as that is known.
        row = RowWrite(lambda: row_write.queue_row(self._ledger.start_request, request))
        written = row.future
        try:
            request, decision = decide_by_rule(self._rule_store, request)
            if decision is None:
                request, decision = await self._ask_person(request, row)
            if decision.kind is DecisionKind.ALLOW_SESSION:
                decision = deliverable_grant(request, decision, deliverable)
        except asyncio.CancelledError:
            decision = Decision.withdrawn()
            # Shielded: a second cancel must not keep the withdrawal out of the ledger
            # or from the subscribers.
            row.start()
            await asyncio.shield(self._finish(request, decision, started, written))
            raise
        except Exception as exc:
            log.exception("request %s failed", request.request_id)
            decision = Decision.error(f"Qoder Desktop failed while asking: {exc}")
        row.start()  # (queued before the decision's row, which waits for it)
        return await self._finish(request, decision, started, written)

    def _mark_siblings(self, granted: list[SessionRule]) -> None:
        """What a person's new `granted` rules mean for the requests waiting beside it:
        deny those its deny rules cover; mark those its allow rules cover ("covered by
        your new rule", UPDATED) and leave them waiting for the person (the CLI asked
        before it held the rules; see `sibling_outcome`). Never an allow."""
        for entry in list(self._pending.values()):
            if entry.future.done():
                continue
            outcome = sibling_outcome(granted, entry.request)
            if isinstance(outcome, Decision):
                entry.future.set_result(outcome)
            elif outcome is not None:
                entry.request = outcome
                log.info("request %s is covered by the new rule %s; a person decides",
                         outcome.request_id, outcome.covered_by_rule)
                self._notify_quietly(BrokerEvent.UPDATED, outcome, None)

    async def _ask_person(self, request: ApprovalRequest, row: RowWrite
                          ) -> tuple[ApprovalRequest, Decision]:
        """The person's answer, with the request as it was then (perhaps marked as
        covered by a rule granted while it waited)."""
        loop = asyncio.get_running_loop()
        entry = _Pending(request, loop.create_future())
        self._add_pending(entry)
        watched = asyncio.wrap_future(row.future)
        watched.add_done_callback(lambda done: row_write.deny_unrecorded(entry.future, done))
        hold = None
        try:
            self._notify(BrokerEvent.ADDED, request, None)
            if self._held_by_presenter(request, row):
                hold = loop.call_later(row_write.ROW_HOLD_MAX_S, row.start)
            else:
                row.start()
            decision = await entry.future
            return entry.request, decision
        finally:
            if hold is not None:
                hold.cancel()
            self._drop_pending(request.request_id)

    def _held_by_presenter(self, request: ApprovalRequest, row: RowWrite) -> bool:
        """True when the presenter queues the row once the dialog has painted."""
        if self._presenter is None:
            return False
        try:
            return self._presenter(request, row.start)
        except Exception:
            log.exception("the presenter failed for request %s", request.request_id)
            return False

    async def _finish(self, request: ApprovalRequest, decision: Decision,
                      started: float, written: Future[None]) -> Decision:
        """Persist the decision, then tell subscribers; a failed write turns allow into deny.

        A withdrawal is told first: no write can change it, and the withdrawals of a
        stopping session then reach the views in the same loop turn. An outcome the
        ledger cannot write is kept in memory and written once it can (UNRECORDED).
        """
        latency_ms = (time.monotonic() - started) * 1000.0
        withdrawn = decision.kind is DecisionKind.WITHDRAWN
        if withdrawn:
            self._notify_quietly(BrokerEvent.WITHDRAWN, request, decision)
        granted: list[SessionRule] = []
        try:
            if decision.kind is DecisionKind.ALLOW_SESSION:
                granted = grants.session_rules_from_updates(
                    request.session_id, decision.updates, granted_by="user")
                self._rule_store.add_rules(granted)
            await self._ledger.write_decision(request, decision, latency_ms,
                                              request_written=written)
        except Exception as exc:
            log.exception("could not record the decision for %s", request.request_id)
            by_person = decision.decided_by is DecidedBy.USER
            if not withdrawn:
                decision = Decision.error(
                    f"Qoder Desktop could not record the decision, so it was denied: {exc}")
            self._unwritten.keep(Unwritten(request, decision, by_person, str(exc), latency_ms))
            if not withdrawn:
                self._notify_quietly(BrokerEvent.UNRECORDED, request, decision)
        else:
            self._unwritten.retry_soon()
        if withdrawn:
            return decision
        if granted and decision.kind is DecisionKind.ALLOW_SESSION:
            # Before ANSWERED: the next dialog to open shows its request as marked.
            self._mark_siblings(granted)
        self._notify_quietly(BrokerEvent.ANSWERED, request, decision)
        return decision

    # -- answers from the UI and the app -----------------------------------------------

    def answer(self, request_id: str, decision: Decision) -> None:
        """Answer a pending request.

        Raises:
            AlreadyAnswered: the request is not pending (answered, withdrawn or unknown).
            ValueError: `decision` is a withdrawal; use `withdraw` for that.
        """
        if decision.kind is DecisionKind.WITHDRAWN:
            raise ValueError("a person cannot answer with 'withdrawn'; use withdraw()")
        entry = self._pending.get(request_id)
        if entry is None or entry.future.done():
            raise AlreadyAnswered(f"request {request_id} is no longer waiting for an answer")
        entry.future.set_result(decision)

    def withdraw(self, request_id: str, reason: str = "") -> bool:
        """The app takes a request back (its agent died); returns False if not pending.

        `reason` says why, for the ledger and the person (e.g. answered in the terminal).
        """
        entry = self._pending.get(request_id)
        if entry is None or entry.future.done():
            return False
        entry.future.set_result(Decision.withdrawn(reason))
        return True

    def withdraw_session(self, session_id: str) -> int:
        """Withdraw every pending request of a session; returns how many."""
        ids = [p.request.request_id for p in self._pending.values()
               if p.request.session_id == session_id]
        return sum(self.withdraw(request_id) for request_id in ids)
