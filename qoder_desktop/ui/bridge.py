"""The bridge between the approval broker and Qt: broker events in, pending lists out.

This is the only UI module that knows the broker (the composition root in
`ui/wiring.py` hands it over). Each waiting request is a `PendingApproval`
(`approval/pending.py`): the dialog queue gets those objects and observes and answers
them directly; nothing calls back into the broker to answer or to write a row. The
broker tells its subscribers synchronously on the asyncio loop; under qasync that loop
runs on the GUI thread, so the signals are delivered at once. The bridge must live on
the thread the broker notifies on (the GUI thread): its timers, below, run there.

The pending list is batched here, and only here, by one mechanism (`TurnThrottle`):

- `pending_changed` (for the dialog queue: the `PendingApproval`s) comes with the first
  broker event of an event-loop turn (a lone request reaches its dialog without waiting,
  inside the broker's ADDED, so the dialog queue can hold the request's ledger row until
  the dialog has painted: `PendingApproval.hold_row_until_shown`); further events
  in the same turn — a session stopping with twenty requests pending withdraws them
  all in one turn — are folded into one more emission when the turn ends.
- `views_pending_changed` (for the window's queue and the tray) comes two turns after
  the first event, once for all events until then. Two, because Qt runs what is due
  in the next turn before the window-system events, among them the new dialog's
  expose: the dialog the person waits for is painted first.

Every emission carries the pending list as it is then, each request as it is now (a
request marked by a new grant is a new object with the same id: the window's queue
shows the change; the open dialog hears it from its `PendingApproval`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent, Unwritten
from qoder_desktop.approval.pending import PendingApproval
from qoder_desktop.domain.models import ApprovalRequest, Decision

log = logging.getLogger(__name__)


class TurnThrottle(QObject):
    """Folds bursts of `notify()` calls into few `fire()` calls, counted in loop turns.

    leading=True: fire at once, then at most once more when `turns` turns have passed
    (if anything changed meanwhile). leading=False: fire once, `turns` turns after the
    first change.
    """

    def __init__(self, fire: Callable[[], None], *, leading: bool, turns: int = 1,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fire = fire
        self._leading = leading
        self._turns = turns
        self._turns_left = 0
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._on_turn)

    def notify(self) -> None:
        """Something changed."""
        if self._timer.isActive() or self._turns_left:
            self._dirty = True
            return
        self._turns_left = self._turns
        self._timer.start()  # before firing: changes the listeners cause are folded in
        if self._leading:
            self._fire()
        else:
            self._dirty = True

    def _on_turn(self) -> None:
        self._turns_left -= 1
        if self._turns_left > 0:
            self._timer.start()
            return
        if self._dirty:
            self._dirty = False
            if self._leading:
                self._turns_left = self._turns
                self._timer.start()
            self._fire()

    def stop(self) -> None:
        """Drop what is held back; nothing fires until the next `notify()`."""
        self._timer.stop()
        self._turns_left = 0
        self._dirty = False


class BrokerBridge(QObject):
    """Re-emits an `ApprovalBroker`'s events as Qt signals; answers go to the
    `PendingApproval` of the request.

    Signals:
        approval_added(PendingApproval): a request waits for a person; observe the
            object for what happens to it next (a newer state, its end).
        pending_changed(list): the `PendingApproval`s now waiting (oldest first), for
            the dialog queue: at once, then at most once more per event-loop turn (see
            the module docstring), so a listener may skip intermediate states but
            always sees the last one.
        views_pending_changed(list): the same list for the window and the tray, two
            turns after a change, once per burst.
        unrecorded(Unwritten): the ledger could not write an outcome (disk full,
            database read-only); the call was denied and the outcome waits in memory.
        recorded_late(ApprovalRequest, int): a kept outcome is written now; how many
            still wait.
    """

    approval_added = Signal(object)
    pending_changed = Signal(list)
    views_pending_changed = Signal(list)
    unrecorded = Signal(object)
    recorded_late = Signal(object, int)

    def __init__(self, broker: ApprovalBroker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._broker = broker
        self._dialogs = TurnThrottle(lambda: self.pending_changed.emit(broker.approvals()),
                                     leading=True, parent=self)
        self._views = TurnThrottle(lambda: self.views_pending_changed.emit(self.pending()),
                                   leading=False, turns=2, parent=self)
        self._unsubscribe: Callable[[], None] | None = broker.subscribe(self._on_event)

    def _on_event(self, event: BrokerEvent, request: ApprovalRequest,
                  decision: Decision | None) -> None:
        if event is BrokerEvent.UNRECORDED:
            kept = self._broker.unwritten_of(request.request_id)
            if kept is not None:
                self.unrecorded.emit(kept)
            return
        if event is BrokerEvent.RECORDED_LATE:
            self.recorded_late.emit(request, len(self._broker.unwritten()))
            return
        if event is BrokerEvent.ADDED:
            added = self._broker.approval(request.request_id)
            if added is not None:
                self.approval_added.emit(added)
        self._dialogs.notify()
        self._views.notify()

    def pending(self) -> list[ApprovalRequest]:
        """The requests waiting for a person, oldest first."""
        return self._broker.pending()

    def approval(self, request_id: str) -> PendingApproval | None:
        """The `PendingApproval` of `request_id` while it waits."""
        return self._broker.approval(request_id)

    def unwritten(self) -> list[Unwritten]:
        """Outcomes the ledger could not write yet (kept in memory), oldest first."""
        return self._broker.unwritten()

    def is_pending(self, request_id: str) -> bool:
        """True while `request_id` waits for an answer."""
        return self._broker.is_pending(request_id)

    def answer(self, request_id: str, decision: Decision) -> bool:
        """Answer a request (its `PendingApproval`); a late answer (already answered or
        withdrawn) does nothing.

        Returns:
            True when this answer was the one that counted.
        """
        pending = self._broker.approval(request_id)
        if pending is None or not pending.answer(decision):
            log.info("ignored a late answer for request %s (already answered or withdrawn)",
                     request_id)
            return False
        return True

    def unsubscribe(self) -> None:
        """Stop listening to the broker (idempotent); nothing is emitted after this."""
        self._dialogs.stop()
        self._views.stop()
        if self._unsubscribe is not None:
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            try:
                unsubscribe()
            except ValueError:
                log.debug("bridge was already unsubscribed")
