"""The queue of pending requests from every session, oldest first."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from qoder_desktop.models import ApprovalRequest, RequestKind
from qoder_desktop.ui.rules_view import format_time
from qoder_desktop.ui.summaries import kind_label, request_summary, session_label

REQUEST_ID_ROLE = Qt.ItemDataRole.UserRole + 1
COL_TIME, COL_SESSION, COL_KIND, COL_WHAT = range(4)
ROW_HEIGHT = 26

_KIND_COLORS = {RequestKind.QUESTION: "#1971C2", RequestKind.PLAN: "#7048E8",
                RequestKind.TOOL: "#E8590C"}


class QueueView(QTreeWidget):
    """Pending requests as rows (received, session, kind, what); Enter or double-click opens.

    Signals:
        open_requested(str): the person asked to open the request with this id.
    """

    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("queueView")
        self.setColumnCount(4)
        self.setHeaderLabels(["Received", "Session", "Kind", "Request"])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setAllColumnsShowFocus(True)
        self.setSortingEnabled(False)
        header = self.header()
        header.setStretchLastSection(True)
        for column in (COL_TIME, COL_SESSION, COL_KIND):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.itemDoubleClicked.connect(lambda item, _col: self._open_item(item))
        self._ids: list[str] = []

    def set_requests(self, requests: list[ApprovalRequest]) -> None:
        """Show `requests`, oldest first, keeping the current request selected if it stays."""
        current = self.current_request_id()
        ordered = sorted(requests, key=lambda r: r.received_at)
        self.clear()
        self._ids = [r.request_id for r in ordered]
        for request in ordered:
            item = QTreeWidgetItem([format_time(request.received_at), session_label(request),
                                    kind_label(request), request_summary(request, 200)])
            item.setData(COL_TIME, REQUEST_ID_ROLE, request.request_id)
            item.setSizeHint(COL_TIME, QSize(0, ROW_HEIGHT))
            item.setForeground(COL_KIND, QColor(_KIND_COLORS[request.kind]))
            item.setToolTip(COL_WHAT, request_summary(request, 600))
            item.setToolTip(COL_TIME, request.received_at.astimezone().strftime("%c"))
            self.addTopLevelItem(item)
            if request.request_id == current:
                self.setCurrentItem(item)
        first = self.topLevelItem(0)
        if self.currentItem() is None and first is not None:
            self.setCurrentItem(first)

    def request_ids(self) -> list[str]:
        """The ids shown, top to bottom (oldest first)."""
        return list(self._ids)

    def current_request_id(self) -> str | None:
        """The id of the highlighted request, or None."""
        item = self.currentItem()
        return None if item is None else item.data(COL_TIME, REQUEST_ID_ROLE)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter/Return opens the highlighted request."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            item = self.currentItem()
            if item is not None:
                self._open_item(item)
                event.accept()
                return
        super().keyPressEvent(event)

    def _open_item(self, item: QTreeWidgetItem) -> None:
        request_id = item.data(COL_TIME, REQUEST_ID_ROLE)
        if request_id:
            self.open_requested.emit(request_id)

    def index_of(self, request_id: str) -> QModelIndex:
        """The model index of the row showing `request_id` (invalid when absent)."""
        for row in range(self.topLevelItemCount()):
            item = self.topLevelItem(row)
            if item is not None and item.data(COL_TIME, REQUEST_ID_ROLE) == request_id:
                return self.indexFromItem(item)
        return QModelIndex()
