"""Requests waiting for a person in the window's queue, the tray and its notifications;
the controller awaits each dialog's answer and gives it to the request's
`PendingApproval`."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QApplication

from qoder_desktop.approval.pending import PendingApproval, PendingEvent
from qoder_desktop.approval.unwritten import Unwritten
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.bridge import BrokerBridge
from qoder_desktop.ui.control.settings import CurrentSettings
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.dialog_queue import DialogQueue
from qoder_desktop.ui.dialogs import BaseDecisionDialog
from qoder_desktop.ui.dialogs.base import DialogWithdrawn
from qoder_desktop.ui.dialogs.storage_notice import show_storage_notice
from qoder_desktop.ui.notifications import RequestNotifier
from qoder_desktop.ui.tray import Tray
from qoder_desktop.ui.windows.main_window import MainWindow

log = logging.getLogger(__name__)

LATE_ANSWER = "That request was already answered or withdrawn."
"""The status line for an answer that came after the request had ended."""


class ApprovalController:
    """Shows pending requests and answers them; a late answer is said, not raised."""

    def __init__(self, bridge: BrokerBridge, dialogs: DialogQueue, window: MainWindow,
                 tray: Tray, notifier: RequestNotifier, current: CurrentSettings, *,
                 tray_available: bool, tasks: Tasks) -> None:
        # the dialog queue hears the bridge's pending_changed directly (wiring.py)
        self._bridge = bridge
        self._dialogs = dialogs
        self._window = window
        self._tray = tray
        self._notifier = notifier
        self._current = current
        self._tasks = tasks
        self.tray_available = tray_available
        """Whether the system tray shows balloons (the desktop's, told at start)."""
        self._watched: dict[str, PendingApproval] = {}
        """The approvals waiting now, by request id (each observed until it ends)."""
        self._storage_notice: str | None = None
        """The last "could not record" message, shown in each dialog while outcomes wait."""

    def show_pending(self, pending: list[ApprovalRequest]) -> None:
        """The window's queue and the tray follow the dialog (see `ui/bridge.py`)."""
        self._window.set_pending(pending)
        self._tray.set_pending(pending)

    def approval_added(self, pending: PendingApproval) -> None:
        """A request waits: notify through the desktop's notification service (the tray
        balloon without one), if the person wants it (and the app is inactive), and
        follow the approval: a newer state shows again, its end takes the notification
        and the balloon away."""
        self._watched[pending.request_id] = pending
        pending.observe(self._on_approval)
        inactive = QApplication.instance() is None or QApplication.activeWindow() is None
        prefs = self._current.value.notifications
        if prefs.enabled and (inactive or not prefs.only_when_inactive):
            self._notifier.announce(pending.request)  # the tray balloon without a service
            if prefs.sound and self._notifier.available:
                QApplication.beep()

    def _on_approval(self, pending: PendingApproval, event: PendingEvent) -> None:
        if event is PendingEvent.UPDATED:
            # A new rule covers it: its notification, if one shows, is shown again with
            # the change (and its "Allow once" armed again).
            self._notifier.update(pending.request)
        elif not pending.is_waiting():
            self._watched.pop(pending.request_id, None)
            self._notifier.withdraw(pending.request_id)
            self._tray.withdraw(pending.request_id)

    def balloon(self, request: ApprovalRequest) -> None:
        """The tray balloon for `request` (no notification service)."""
        if self.tray_available:
            self._tray.notify(request, sound=self._current.value.notifications.sound)

    def decided(self, request_id: str, decision: Decision) -> None:
        """An answer from a notification's button, given to the request's approval; a
        late one (answered or withdrawn meanwhile) is only said."""
        pending = self._watched.get(request_id)
        if pending is None or not pending.answer(decision):
            self._window.show_status(LATE_ANSWER)

    async def answer_from(self, dialog: BaseDecisionDialog, pending: PendingApproval) -> None:
        """Await the person's answer in `dialog` and give it to `pending`; a dialog that
        closed unanswered (withdrawn, answered elsewhere) gives nothing."""
        try:
            decision = await dialog.decision()
        except DialogWithdrawn:
            return
        if not pending.answer(decision):
            log.info("ignored a late answer for request %s", pending.request_id)
            self._window.show_status(LATE_ANSWER)

    def unrecorded(self, kept: Unwritten) -> None:
        """The ledger could not write an outcome: the person is told in the status bar
        and in every decision dialog still open (the call was denied)."""
        what = "your answer" if kept.by_person else "the request"
        text = f"Could not record {what} — the call was denied: {kept.reason}"
        self._storage_notice = text
        self._window.show_status(text)
        for dialog in self._dialogs.open_dialogs():
            show_storage_notice(dialog, text)

    def dialog_opened(self, dialog: BaseDecisionDialog) -> None:
        """A dialog opened: its answer is awaited (`answer_from`); while outcomes wait to
        be written it says so too."""
        pending = self._dialogs.approval_of(dialog.request.request_id)
        if pending is not None:
            self._tasks.spawn(self.answer_from(dialog, pending), "answering a request")
        if self._storage_notice is not None and self._bridge.unwritten():
            show_storage_notice(dialog, self._storage_notice)

    def recorded_late(self, request: ApprovalRequest, still_waiting: int) -> None:
        """A kept outcome reached the ledger (the disk takes writes again)."""
        if still_waiting:
            tool = make_visible(request.tool_name)
            self._window.show_status(
                f"The ledger takes writes again: recorded the outcome of {tool}; "
                f"{still_waiting} more wait to be written.")
            return
        self._storage_notice = None
        self._window.show_status(
            "The ledger takes writes again: every outcome kept in memory is recorded.")
        for dialog in self._dialogs.open_dialogs():
            show_storage_notice(dialog, None)

    def build_failed(self, request_id: str, message: str) -> None:
        """A request whose dialog could not be built is denied with the reason (fail closed)."""
        pending = self._watched.get(request_id) or self._bridge.approval(request_id)
        if pending is not None:
            pending.answer(Decision.error(message))
        self._window.show_status(message)

    def open_from_tray(self, request_id: str) -> None:
        """Bring the window up and open the request's dialog while it still waits."""
        self._window.bring_to_front()
        pending = self._watched.get(request_id)
        if pending is not None and pending.is_waiting():
            self._dialogs.open(request_id)
