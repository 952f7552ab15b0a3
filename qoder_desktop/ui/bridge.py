"""The bridge between the approval broker and Qt: broker events in, answers out.

This is the only UI module that knows the broker (the composition root in
`ui/wiring.py` hands it over). The broker tells its subscribers
synchronously on the asyncio loop; under qasync that loop runs on the GUI thread, so
the signals are delivered at once. The bridge must live on the thread the broker
notifies on (the GUI thread): its turn timer, below, runs there.

`pending_changed` is throttled to the event loop's turns: the first broker event of a
turn emits it at once (a lone request reaches its dialog without waiting), further
events in the same turn — a session stopping with twenty requests pending withdraws
them all in one turn — are folded into one more emission when the turn ends (a
single-shot 0 ms timer). Every emission carries the pending list as it is then.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from qoder_desktop.approval.broker import AlreadyAnswered, ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Decision

log = logging.getLogger(__name__)


class BrokerBridge(QObject):
    """Re-emits an `ApprovalBroker`'s events as Qt signals and forwards answers to it.

    Signals:
        request_added(ApprovalRequest): a request waits for a person.
        pending_changed(list): the requests now waiting (oldest first), after any event;
            at most once more per event-loop turn however many events the turn had (see
            the module docstring), so a listener may skip intermediate states but always
            sees the last one.
    """

    request_added = Signal(object)
    pending_changed = Signal(list)

    def __init__(self, broker: ApprovalBroker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._broker = broker
        self._turn = QTimer(self)
        self._turn.setSingleShot(True)
        self._turn.setInterval(0)
        self._turn.timeout.connect(self._on_turn_end)
        self._changed_in_turn = False
        self._unsubscribe: Callable[[], None] | None = broker.subscribe(self._on_event)

    def _on_event(self, event: BrokerEvent, request: ApprovalRequest,
                  decision: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            self.request_added.emit(request)
        self._pending_changed()

    def _pending_changed(self) -> None:
        if self._turn.isActive():  # already emitted this turn: once more when it ends
            self._changed_in_turn = True
            return
        self._turn.start()  # before emitting: events the listeners cause are folded in
        self.pending_changed.emit(self.pending())

    def _on_turn_end(self) -> None:
        if self._changed_in_turn and self._unsubscribe is not None:
            self._changed_in_turn = False
            self._turn.start()
            self.pending_changed.emit(self.pending())

    def pending(self) -> list[ApprovalRequest]:
        """The requests waiting for a person, oldest first."""
        return self._broker.pending()

    def is_pending(self, request_id: str) -> bool:
        """True while `request_id` waits for an answer."""
        return self._broker.is_pending(request_id)

    def answer(self, request_id: str, decision: Decision) -> bool:
        """Answer a request; a late answer (already answered or withdrawn) does nothing.

        Returns:
            True when this answer was the one that counted.
        """
        try:
            self._broker.answer(request_id, decision)
        except AlreadyAnswered:
            log.info("ignored a late answer for request %s (already answered or withdrawn)",
                     request_id)
            return False
        return True

    def unsubscribe(self) -> None:
        """Stop listening to the broker (idempotent); nothing is emitted after this."""
        self._turn.stop()
        self._changed_in_turn = False
        if self._unsubscribe is not None:
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            try:
                unsubscribe()
            except ValueError:
                log.debug("bridge was already unsubscribed")
