"""Which decision dialogs are open: the oldest pending request gets one, the rest wait.

The main window's queue shows every pending request; a person can open any of them
directly. When a dialog's request is answered (by anyone) or withdrawn, the dialog
closes at once and the next oldest request gets its dialog; when it changes while
waiting (a rule granted meanwhile covers it), the open dialog shows the change. Dialogs come from
`DialogSpares` (a spare built ahead, filled in with the request) once
`prepare_spares()` has been called; until then each is built for its request.
`when_painted` tells the broker when a new request's dialog has painted (the loop turn
after its first Paint event), so that the request's ledger row is written after the
first frame, not while it is being made.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.ui.dialogs import BaseDecisionDialog, DialogBuildError
from qoder_desktop.ui.dialogs.spares import DialogSpares

log = logging.getLogger(__name__)

DialogFactory = Callable[[ApprovalRequest, QWidget | None], BaseDecisionDialog]


class DialogQueue(QObject):
    """Opens, raises and closes decision dialogs for pending requests.

    Signals:
        decided(str, object): a person answered request_id with a `Decision`.
        build_failed(str, str): no dialog could be built for request_id (message); the
            caller must fail closed.
        dialog_opened(object): a dialog was shown (for tests and benchmarks).
    """

    decided = Signal(str, object)
    build_failed = Signal(str, str)
    dialog_opened = Signal(object)

    def __init__(self, parent_widget: QWidget | None = None,
                 factory: DialogFactory | None = None) -> None:
        super().__init__()
        self._parent_widget = parent_widget
        self.spares = DialogSpares(parent_widget)
        self._factory: DialogFactory = factory or self.spares.take
        self._dialogs: dict[str, BaseDecisionDialog] = {}
        self._pending: list[ApprovalRequest] = []
        self._unpainted: set[str] = set()
        """The requests whose dialog is shown but has not painted yet."""

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

    def when_painted(self, request: ApprovalRequest, then: Callable[[], None]) -> bool:
        """Call `then` once `request`'s dialog has painted (the loop turn after its first
        Paint event) or closed unpainted; False, and nothing is called, when no dialog
        of it is on its way."""
        dialog = self._dialogs.get(request.request_id)
        if dialog is None or request.request_id not in self._unpainted:
            return False
        dialog.when_painted(then)
        return True

    def set_pending(self, pending: list[ApprovalRequest]) -> None:
        """Follow the broker's pending list; opens a dialog when none is open."""
        self._pending = list(pending)
        still = {request.request_id: request for request in pending}
        for request_id in [rid for rid in self._dialogs if rid not in still]:
            self.close(request_id)
        for request_id, dialog in self._dialogs.items():
            if dialog.request is not still[request_id] and dialog.request != still[request_id]:
                dialog.update_request(still[request_id])  # (marked by a new grant)
        if not self._dialogs and self._pending:
            self.open(self._pending[0].request_id)

    def open(self, request_id: str) -> BaseDecisionDialog | None:
        """Show (or raise) the dialog for a pending request."""
        existing = self._dialogs.get(request_id)
        if existing is not None:
            existing.raise_()
            existing.activateWindow()
            return existing
        request = next((r for r in self._pending if r.request_id == request_id), None)
        if request is None:
            return None
        try:
            dialog = self._factory(request, self._parent_widget)
        except DialogBuildError as exc:
            log.warning("no dialog for request %s: %s", request_id, exc)
            self.build_failed.emit(request_id, str(exc))
            return None
        self._dialogs[request_id] = dialog
        dialog.decided.connect(lambda decision, rid=request_id: self._on_decided(rid, decision))
        dialog.finished.connect(lambda _code, rid=request_id: self._forget(rid))
        self._unpainted.add(request_id)
        dialog.when_painted(partial(self._unpainted.discard, request_id))
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        self.dialog_opened.emit(dialog)
        return dialog

    def close(self, request_id: str) -> None:
        """The request was answered elsewhere or withdrawn: close its dialog, emit nothing."""
        dialog = self._dialogs.pop(request_id, None)
        if dialog is not None:
            dialog.withdraw()  # (its `when_painted` calls run as it closes)
            dialog.deleteLater()

    def close_all(self) -> None:
        """Close every dialog and drop the spares (the app is quitting)."""
        self.spares.stop()
        for request_id in list(self._dialogs):
            self.close(request_id)

    def _on_decided(self, request_id: str, decision: Decision) -> None:
        self.decided.emit(request_id, decision)

    def _forget(self, request_id: str) -> None:
        dialog = self._dialogs.pop(request_id, None)
        if dialog is not None:
            dialog.deleteLater()
