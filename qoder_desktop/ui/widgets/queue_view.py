"""The queue of pending requests from every session, in the broker's order (oldest first).

The queue follows the broker's pending list, which changes with every request added,
answered or withdrawn; with a thousand requests waiting it must not be rebuilt each
time. `QueueView.set_requests` therefore updates the rows in place by request id: rows
whose request left are removed, new requests get rows at their place, every other row is
left alone (a request marked while it waits, "covered by your new rule", is given again
with the same id and gets a new row in place). A row's tooltips are made when the
pointer first rests on it, and the narrow columns are sized from widths measured once
per row (`ResizeToContents` would measure every row again after each change).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui  # (QColor is built with the first row, after the frame)
from PySide6.QtCore import QEvent, QModelIndex, QSize, Signal
from PySide6.QtGui import QHelpEvent, QKeyEvent, QShowEvent
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from qoder_desktop.domain.kinds import RequestKind
from qoder_desktop.ui.plain_text import tooltip
from qoder_desktop.ui.qt_numbers import USER_ROLE
from qoder_desktop.ui.summaries import (
    covered_mark,
    covered_note,
    elide,
    kind_label,
    request_summary,
    session_label,
)
from qoder_desktop.ui.widgets.rules_view import format_time, local_now

if TYPE_CHECKING:  # pydantic and the models load after the first paint
    from datetime import date

    from qoder_desktop.domain.models import ApprovalRequest

REQUEST_ID_ROLE = USER_ROLE + 1
COL_TIME, COL_SESSION, COL_KIND, COL_WHAT = range(4)
ROW_HEIGHT = 26
SUMMARY_LIMIT = 200
TOOLTIP_LIMIT = 600
MAX_SESSION_WIDTH = 260
"""The session column grows with the longest name up to this many pixels; longer names
are elided (the full name is in the cell's tooltip; the column can be widened by hand)."""

FITTED_COLUMNS = (COL_TIME, COL_SESSION, COL_KIND)
"""Columns sized to their widest cell; the request column takes the rest."""

_KIND_COLORS = {RequestKind.QUESTION: "#1971C2", RequestKind.PLAN: "#7048E8",
                RequestKind.TOOL: "#E8590C"}


def _what(request: ApprovalRequest, limit: int) -> str:
    """The request column: what it asks, after its mark when a new rule covers it."""
    mark = covered_mark(request)
    if mark is None:
        return request_summary(request, limit)
    return elide(f"[{mark}] {request_summary(request, limit)}", limit)


def _today() -> date:
    return local_now().date()


class QueueItem(QTreeWidgetItem):
    """One pending request: texts set once, tooltips made on first use."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__([format_time(request.received_at), session_label(request),
                          kind_label(request), _what(request, SUMMARY_LIMIT)])
        self.request = request
        self.widths: tuple[int, ...] = ()
        """Widths (px) the cells in `FITTED_COLUMNS` need, measured by the view."""
        self._tooltips = False
        self.setData(COL_TIME, REQUEST_ID_ROLE, request.request_id)
        self.setSizeHint(COL_WHAT, QSize(0, ROW_HEIGHT))  # the stretched column
        self.setForeground(COL_KIND, QtGui.QColor(_KIND_COLORS[request.kind]))

    @property
    def request_id(self) -> str:
        """The id of the request this row shows."""
        return self.request.request_id

    def refresh_time(self) -> None:
        """Show the received time again (it gains its date once it is no longer today)."""
        self.setText(COL_TIME, format_time(self.request.received_at))

    def ensure_tooltips(self) -> None:
        """Set the row's tooltips (full time, session, request summary) if not yet set."""
        if self._tooltips:
            return
        self._tooltips = True
        request = self.request
        self.setToolTip(COL_TIME, request.received_at.astimezone().strftime("%c"))
        self.setToolTip(COL_SESSION, tooltip(session_label(request)))
        note = covered_note(request) if request.granted_while_waiting else None
        self.setToolTip(COL_WHAT, tooltip(_what(request, TOOLTIP_LIMIT)
                                          + (f"\n{note}" if note else "")))


class QueueView(QTreeWidget):
    """Pending requests as rows (received, session, kind, what); Enter or double-click opens.

    Signals:
        open_requested(str): the person asked to open the request with this id.
    """

    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._ids: list[str] = []
        self._items: dict[str, QueueItem] = {}
        self._day: date | None = None  # the day the rows' times were written on
        self._widths: list[Counter[int]] = [Counter() for _ in FITTED_COLUMNS]
        self._fitting = False
        self._hand_sized: set[int] = set()
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
        for column in FITTED_COLUMNS:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.sectionResized.connect(self._section_resized)
        self.itemDoubleClicked.connect(lambda item, _col: self._open_item(item))
        self._fit_columns()

    # -- updates -----------------------------------------------------------------------

    def set_requests(self, requests: list[ApprovalRequest]) -> None:
        """Show `requests` in the order given (the broker's: oldest first), keeping the
        current request selected if it stays.

        Only what changed is touched: rows of requests no longer given are removed, new
        requests get rows at their place, every other row stays as it is.
        """
        current = self.current_request_id()
        by_id = {r.request_id: r for r in requests}
        ordered = list(by_id.values())  # (an id given twice is shown once)
        removed = self._remove_missing(by_id)
        replaced = self._replace_changed(by_id)
        changed = removed or replaced
        if len(self._items) != len(ordered) or replaced:
            kept = [rid for rid in by_id if rid in self._items]
            if kept != self._ids:  # the remaining rows changed order: lay all out again
                self._rebuild(ordered)
            else:
                self._insert_new(ordered)
            changed = True
        today = _today()
        if self._day is None:  # the first rows: written today
            self._day = today
        elif today != self._day:  # times of earlier days now show their date
            self._day = today
            for item in self._items.values():
                item.refresh_time()
            self._remeasure()
            changed = True
        if changed:
            self._fit_columns()
        self._restore_current(current)

    def _remove_missing(self, by_id: dict[str, ApprovalRequest]) -> bool:
        gone = [row for row, rid in enumerate(self._ids) if rid not in by_id]
        for row in reversed(gone):
            self.takeTopLevelItem(row)
            self._forget(self._items.pop(self._ids.pop(row)))
        return bool(gone)

    def _replace_changed(self, by_id: dict[str, ApprovalRequest]) -> bool:
        """A request given again with other content (same id) gets a new row."""
        items = self._items
        others = [rid for rid, item in items.items() if item.request is not by_id[rid]]
        replaced = False
        for rid in others:
            old, given = items[rid], by_id[rid]
            if old.request == given:
                old.request = given
                continue
            row = self._ids.index(rid)
            self.takeTopLevelItem(row)
            self._forget(old)
            items[rid] = item = QueueItem(given)
            self.insertTopLevelItem(row, item)
            self._measure(item)
            replaced = True
        return replaced

    def _insert_new(self, ordered: list[ApprovalRequest]) -> None:
        """Insert rows for requests not shown yet, in runs, at their place in `ordered`."""
        shown = len(self._ids)
        if [r.request_id for r in ordered[:shown]] == self._ids:  # the usual: newest last
            self._insert(shown, [QueueItem(r) for r in ordered[shown:]])
            return
        row = 0
        run: list[QueueItem] = []
        for request in ordered:
            if request.request_id in self._items:
                row = self._insert(row, run) + 1
                run = []
            else:
                run.append(QueueItem(request))
        self._insert(row, run)

    def _insert(self, row: int, run: list[QueueItem]) -> int:
        """Insert the rows of `run` at `row`; returns the row after them."""
        if run:
            self.insertTopLevelItems(row, list(run))
            self._ids[row:row] = [item.request_id for item in run]
            for item in run:
                self._items[item.request_id] = item
                self._measure(item)
        return row + len(run)

    def _rebuild(self, ordered: list[ApprovalRequest]) -> None:
        keep = self._items
        self.invisibleRootItem().takeChildren()
        items = [keep.pop(r.request_id) if r.request_id in keep else QueueItem(r)
                 for r in ordered]
        self.addTopLevelItems(list(items))
        self._ids = [item.request_id for item in items]
        self._items = {item.request_id: item for item in items}
        self._remeasure()

    def _restore_current(self, current: str | None) -> None:
        item = self._items.get(current) if current is not None else None
        if item is None and self._ids:
            item = self._items[self._ids[0]]
        if item is not None and self.currentItem() is not item:
            self.setCurrentItem(item)

    # -- column widths -----------------------------------------------------------------

    def _measure(self, item: QueueItem) -> None:
        """Note the widths `item`'s fitted cells need (as ResizeToContents measures them:
        the delegate's size hint), counted per width; `item` must be in the view."""
        item.widths = tuple(self.sizeHintForIndex(self.indexFromItem(item, column)).width()
                            for column in FITTED_COLUMNS)
        for counts, width in zip(self._widths, item.widths, strict=True):
            counts[width] += 1

    def _forget(self, item: QueueItem) -> None:
        for counts, width in zip(self._widths, item.widths, strict=True):
            counts[width] -= 1
            if counts[width] <= 0:
                del counts[width]

    def _remeasure(self) -> None:
        self._widths = [Counter() for _ in FITTED_COLUMNS]
        for item in self._items.values():
            self._measure(item)

    def _fit_columns(self) -> None:
        """Size the fitted columns to their widest cell or header, as ResizeToContents."""
        header = self.header()
        for counts, column in zip(self._widths, FITTED_COLUMNS, strict=True):
            if column in self._hand_sized:
                continue
            title = header.sectionSizeHint(column)
            width = max(title, max(counts, default=0))
            if column == COL_SESSION:
                width = min(width, max(MAX_SESSION_WIDTH, title))
            if header.sectionSize(column) != width:
                self._fitting = True
                try:
                    header.resizeSection(column, width)
                finally:
                    self._fitting = False

    def _section_resized(self, column: int, _old: int, _new: int) -> None:
        """A column the person resized by hand keeps that width."""
        if not self._fitting and column in FITTED_COLUMNS and self.isVisible():
            self._hand_sized.add(column)

    # -- queries -----------------------------------------------------------------------

    def request_ids(self) -> list[str]:
        """The ids shown, top to bottom (oldest first)."""
        return list(self._ids)

    def first_request_id(self) -> str | None:
        """The id of the top row (the oldest waiting request), or None."""
        return self._ids[0] if self._ids else None

    def current_request_id(self) -> str | None:
        """The id of the highlighted request, or None."""
        item = self.currentItem()
        return None if item is None else item.data(COL_TIME, REQUEST_ID_ROLE)

    def item_for(self, request_id: str) -> QueueItem | None:
        """The row showing `request_id`, or None."""
        return self._items.get(request_id)

    def index_of(self, request_id: str) -> QModelIndex:
        """The model index of the row showing `request_id` (invalid when absent)."""
        item = self._items.get(request_id)
        return QModelIndex() if item is None else self.indexFromItem(item)

    # -- events ------------------------------------------------------------------------

    def viewportEvent(self, event: QEvent) -> bool:
        """Make a row's tooltips when the pointer first rests on it."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            item = self.itemAt(event.pos())
            if isinstance(item, QueueItem):
                item.ensure_tooltips()
        return super().viewportEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        """Fit the columns again once the header has its final (styled) font."""
        super().showEvent(event)
        self._fit_columns()

    def changeEvent(self, event: QEvent) -> None:
        """A new font or style changes the text widths: measure again."""
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._remeasure()
            self._fit_columns()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter/Return opens the highlighted request."""
        if event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter):
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
