"""The approval broker: one queue for every session's requests, oldest first.

A backend adapter calls `await broker.request(req)` from inside the SDK's
`can_use_tool` callback (the gateway and the terminal hook server likewise). The
broker first asks the session rules; if none decides, it queues the request, tells its
subscribers (the UI) and waits for `answer()`. Each request is answered exactly once.
If the awaiting task is cancelled (the agent withdrew the request), the request is
recorded as withdrawn and subscribers hear of it at once. Any error on the way is a
deny with a message: the broker fails closed.

Each request's life is one `PendingApproval` (`approval/pending.py`): its state, its
answer and its ledger row. The broker makes it, keeps it while it waits (`approvals()`,
`approval(request_id)`) and records its end; views observe and answer that object.

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
from datetime import datetime
from enum import StrEnum

from qoder_desktop.approval.pending import Ledger, PendingApproval, PendingEvent
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


class AlreadyAnswered(RuntimeError):
    """A second answer for a request that was already answered or withdrawn."""


def _age(pending: PendingApproval) -> tuple[datetime, float]:
    """The queue's order: received first, then queued first."""
    return pending.received_at, pending.started


class ApprovalBroker:
    """Queues approval requests from all sessions and hands out their decisions.

    Signals (as subscriber events):
        ADDED: a request waits for a person (its `PendingApproval` is `approval(id)`;
            a view that shows it at once says so, `hold_row_until_shown`, during ADDED).
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
        self._pending: dict[str, PendingApproval] = {}
        self._order: list[PendingApproval] | None = []
        """`_pending`'s approvals oldest first (None: to be sorted again); kept up to date
        as requests come and go, so `pending()` does not sort a long queue each time."""
        self._waiting: list[PendingApproval] | None = None
        """Those of `_order` still waiting (None: to be picked again): found again only
        after a request came, went or moved, not at each of the several `pending()`
        calls one answer makes (each a pass over the whole queue)."""
        self._subscribers: list[Subscriber] = []
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

    def approvals(self) -> list[PendingApproval]:
        """The approvals waiting for a person, oldest first."""
        waiting = self._waiting
        if waiting is None:
            entries = self._order
            if entries is None:
                entries = self._order = sorted(self._pending.values(), key=_age)
            waiting = self._waiting = [entry for entry in entries if entry.is_waiting()]
        return list(waiting)

    def pending(self) -> list[ApprovalRequest]:
        """Requests waiting for a person (each as it is now), oldest first."""
        return [entry.request for entry in self.approvals()]

    def approval(self, request_id: str) -> PendingApproval | None:
        """The approval of `request_id` while it waits."""
        entry = self._pending.get(request_id)
        return entry if entry is not None and entry.is_waiting() else None

    def _add_pending(self, entry: PendingApproval) -> None:
        replaced = self._pending.get(entry.request_id)
        self._pending[entry.request_id] = entry
        self._waiting = None
        entry.observe(self._entry_moved)
        order = self._order
        if replaced is None and order is not None and (not order
                                                       or _age(order[-1]) <= _age(entry)):
            order.append(entry)  # the usual: the newest comes last (as a stable sort has it)
        else:
            self._order = None

    def _entry_moved(self, _entry: PendingApproval, _event: PendingEvent) -> None:
        """An approval moved (shown, changed, ended): who waits is picked again."""
        self._waiting = None

    def _drop_pending(self, request_id: str) -> None:
        self._waiting = None
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
        return self.approval(request_id) is not None

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
        if request.request_id in self._pending:
            log.warning("duplicate request id %s refused", request.request_id)
            return Decision.error(
                "Qoder Desktop refused a duplicate permission request (the same id is already "
                "waiting for an answer).")
        pending = PendingApproval(request, self._ledger)
        try:
            ruled, decision = decide_by_rule(self._rule_store, request)
            if decision is None:
                pending.update(ruled)
                decision = await self._ask_person(pending)
            else:
                pending.request = ruled
                pending.answer(decision)
            if decision.kind is DecisionKind.ALLOW_SESSION:
                decision = deliverable_grant(pending.request, decision, deliverable)
        except asyncio.CancelledError:
            pending.withdraw()
            # Shielded: a second cancel must not keep the withdrawal out of the ledger
            # or from the subscribers.
            await asyncio.shield(self._finish(pending, Decision.withdrawn()))
            raise
        except Exception as exc:
            log.exception("request %s failed", request.request_id)
            decision = Decision.error(f"Qoder Desktop failed while asking: {exc}")
            pending.answer(decision)
        return await self._finish(pending, decision)

    def _mark_siblings(self, granted: list[SessionRule]) -> None:
        """What a person's new `granted` rules mean for the requests waiting beside it:
        deny those its deny rules cover; mark those its allow rules cover ("covered by
        your new rule", UPDATED) and leave them waiting for the person (the CLI asked
        before it held the rules; see `sibling_outcome`). Never an allow."""
        for entry in list(self._pending.values()):
            if not entry.is_waiting():
                continue
            outcome = sibling_outcome(granted, entry.request)
            if isinstance(outcome, Decision):
                entry.answer(outcome)
            elif outcome is not None and entry.update(outcome):
                log.info("request %s is covered by the new rule %s; a person decides",
                         outcome.request_id, outcome.covered_by_rule)
                self._notify_quietly(BrokerEvent.UPDATED, outcome, None)

    async def _ask_person(self, pending: PendingApproval) -> Decision:
        """The person's answer (the request as it is then is `pending.request`, perhaps
        marked as covered by a rule granted while it waited).

        The ledger row: subscribers hear ADDED first, and a view that shows the request
        at once holds its row until the dialog has painted; otherwise it is queued now."""
        self._add_pending(pending)
        try:
            self._notify(BrokerEvent.ADDED, pending.request, None)
            pending.queue_row_unless_held()
            return await pending.answered()
        finally:
            self._drop_pending(pending.request_id)

    async def _finish(self, pending: PendingApproval, decision: Decision) -> Decision:
        """Persist the decision, then tell subscribers; a failed write turns allow into deny.

        A withdrawal is told first: no write can change it, and the withdrawals of a
        stopping session then reach the views in the same loop turn. An outcome the
        ledger cannot write is kept in memory and written once it can (UNRECORDED).
        """
        request = pending.request
        latency_ms = (time.monotonic() - pending.started) * 1000.0
        withdrawn = decision.kind is DecisionKind.WITHDRAWN
        if withdrawn:
            self._notify_quietly(BrokerEvent.WITHDRAWN, request, decision)
        granted: list[SessionRule] = []
        try:
            if decision.kind is DecisionKind.ALLOW_SESSION:
                granted = grants.session_rules_from_updates(
                    request.session_id, decision.updates, granted_by="user")
                self._rule_store.add_rules(granted)
            await pending.record(decision, latency_ms)
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
        pending.sent = decision
        if withdrawn:
            return decision
        if granted and decision.kind is DecisionKind.ALLOW_SESSION:
            # Before ANSWERED: the next dialog to open shows its request as marked.
            self._mark_siblings(granted)
        self._notify_quietly(BrokerEvent.ANSWERED, request, decision)
        return decision

    # -- answers from the UI and the app -----------------------------------------------

    def answer(self, request_id: str, decision: Decision) -> None:
        """Answer a pending request (its `PendingApproval.answer`).

        Raises:
            AlreadyAnswered: the request is not pending (answered, withdrawn or unknown).
            ValueError: `decision` is a withdrawal; use `withdraw` for that.
        """
        if decision.kind is DecisionKind.WITHDRAWN:
            raise ValueError("a person cannot answer with 'withdrawn'; use withdraw()")
        entry = self.approval(request_id)
        if entry is None or not entry.answer(decision):
            raise AlreadyAnswered(f"request {request_id} is no longer waiting for an answer")

    def withdraw(self, request_id: str, reason: str = "") -> bool:
        """The app takes a request back (its agent died); returns False if not pending.

        `reason` says why, for the ledger and the person (e.g. answered in the terminal).
        """
        entry = self.approval(request_id)
        return entry is not None and entry.withdraw(reason)

    def time_out(self, request_id: str, reason: str = "") -> bool:
        """Nobody answered in time (a way in stopped waiting): the request is denied
        (fail closed); returns False if it is not pending."""
        entry = self.approval(request_id)
        return entry is not None and entry.time_out(reason)

    def withdraw_session(self, session_id: str) -> int:
        """Withdraw every pending request of a session; returns how many."""
        ids = [p.request_id for p in self._pending.values()
               if p.request.session_id == session_id]
        return sum(self.withdraw(request_id) for request_id in ids)
