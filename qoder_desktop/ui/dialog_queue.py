"""Which decision dialogs are open: the oldest pending request gets one, the rest wait.

The dialog queue follows the broker's `PendingApproval`s (through the bridge) and
observes each one it shows a dialog for: when the approval ends (answered by anyone,
withdrawn, timed out) the dialog closes at once and the next oldest request gets its
dialog; when it changes while waiting (a rule granted meanwhile covers it), the open
dialog shows the change. The main window's queue shows every pending request; a person
can open any of them directly. Dialogs come from `DialogSpares` (a spare built ahead,
filled in with the request) once `prepare_spares()` has been called; until then each is
built for its request.

Automatic garbage collection is held off from a dialog's filling until the loop turn
after its first paint (`memory.hold_collection`; at most `COLLECTION_HOLD_MAX_MS`).
A dialog opened inside the broker's ADDED holds its request's ledger row until it has
painted (`PendingApproval.hold_row_until_shown`), and marks the approval shown in the
loop turn after its first Paint event (`mark_shown`, which queues the row): the writer
thread does not share the CPU with the first frame. The person's answer is awaited by
the approvals controller (`await dialog.decision()`), which answers the approval.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from qoder_desktop.approval.pending import PendingApproval, PendingEvent
from qoder_desktop.diagnostics.memory import hold_collection
from qoder_desktop.domain.models import ApprovalRequest
from qoder_desktop.ui.dialogs import BaseDecisionDialog, DialogBuildError
from qoder_desktop.ui.dialogs.spares import DialogSpares

log = logging.getLogger(__name__)

DialogFactory = Callable[[ApprovalRequest, QWidget | None], BaseDecisionDialog]
COLLECTION_HOLD_MAX_MS = 1000
"""The longest automatic garbage collection stays off for a dialog that never paints."""


class DialogQueue(QObject):
    """Opens, raises and closes decision dialogs for pending approvals.

    Signals:
        dialog_opened(object): a dialog was shown; its approval is `approval_of(id)`
            (the approvals controller awaits its answer).
        build_failed(str, str): no dialog could be built for request_id (message); the
            caller must fail closed.
    """

    build_failed = Signal(str, str)
    dialog_opened = Signal(object)

    def __init__(self, parent_widget: QWidget | None = None,
                 factory: DialogFactory | None = None) -> None:
        super().__init__()
        self._parent_widget = parent_widget
        self.spares = DialogSpares(parent_widget)
        self._factory: DialogFactory = factory or self.spares.take
        self._dialogs: dict[str, BaseDecisionDialog] = {}
        self._watching: dict[str, Callable[[], None]] = {}
        """How to stop observing the approval of each open dialog."""
        self._pending: list[PendingApproval] = []

    def prepare_spares(self, warm_up_cwd: str | None = None) -> None:
        """Build spare dialogs while the loop is idle (after start-up), so a request
        only fills one in; see `DialogSpares.start`."""
        self.spares.start(warm_up_cwd)

    def dialog(self, request_id: str) -> BaseDecisionDialog | None:
        """The open dialog of a request, if any."""
        return self._dialogs.get(request_id)

    def open_dialogs(self) -> list[BaseDecisionDialog]:
        """Every dialog open now."""
        return list(self._dialogs.values())

    def approval_of(self, request_id: str) -> PendingApproval | None:
        """The waiting approval of `request_id` (as the last pending list had it)."""
        return next((p for p in self._pending
                     if p.request_id == request_id and p.is_waiting()), None)

    def set_pending(self, pending: list[PendingApproval]) -> None:
        """Follow the broker's waiting approvals; opens a dialog when none is open."""
        self._pending = [p for p in pending if p.is_waiting()]
        still = {p.request_id for p in self._pending}
        for request_id in [rid for rid in self._dialogs if rid not in still]:
            self.close(request_id)
        if not self._dialogs and self._pending:
            self.open(self._pending[0].request_id)

    def open(self, request_id: str) -> BaseDecisionDialog | None:
        """Show (or raise) the dialog for a pending request."""
        existing = self._dialogs.get(request_id)
        if existing is not None:
            existing.raise_()
            existing.activateWindow()
            return existing
        pending = self.approval_of(request_id)
        if pending is None:
            return None
        release = hold_collection()  # until the first frame (`hold_collection`)
        QTimer.singleShot(COLLECTION_HOLD_MAX_MS, self, release)  # (one never painted)
        try:
            dialog = self._factory(pending.request, self._parent_widget)
        except DialogBuildError as exc:
            release()
            log.warning("no dialog for request %s: %s", request_id, exc)
            self.build_failed.emit(request_id, str(exc))
            return None
        except BaseException:
            release()
            raise
        dialog.when_painted(release)
        self._dialogs[request_id] = dialog
        self._watching[request_id] = pending.observe(self._on_approval)
        dialog.finished.connect(lambda _code, rid=request_id: self._forget(rid))
        pending.hold_row_until_shown()  # (only inside ADDED: the row is not queued yet)
        dialog.when_painted(pending.mark_shown)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        self.dialog_opened.emit(dialog)
        return dialog

    def close(self, request_id: str) -> None:
        """The request was answered elsewhere or withdrawn: close its dialog, emit nothing."""
        self._stop_watching(request_id)
        dialog = self._dialogs.pop(request_id, None)
        if dialog is not None:
            dialog.withdraw()  # (its `when_painted` calls run as it closes)
            dialog.deleteLater()

    def close_all(self) -> None:
        """Close every dialog and drop the spares (the app is quitting)."""
        self.spares.stop()
        for request_id in list(self._dialogs):
            self.close(request_id)

    def _on_approval(self, pending: PendingApproval, event: PendingEvent) -> None:
        if event is PendingEvent.UPDATED:
            dialog = self._dialogs.get(pending.request_id)
            if dialog is not None:
                dialog.update_request(pending.request)  # (marked by a new grant)
        elif not pending.is_waiting():
            self.close(pending.request_id)

    def _stop_watching(self, request_id: str) -> None:
        stop = self._watching.pop(request_id, None)
        if stop is not None:
            stop()

    def _forget(self, request_id: str) -> None:
        self._stop_watching(request_id)
        dialog = self._dialogs.pop(request_id, None)
        if dialog is not None:
            dialog.deleteLater()
