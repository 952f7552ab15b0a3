"""The decision history's Qt model over the ledger, which fetches what is shown.

`HistoryModel` asks the store's `HistoryReader` (its own thread and read-only SQLite
connection) for one page at a time, newest first: the first page when the filter
changes, the next when the view scrolls near the end (`canFetchMore`/`fetchMore`).
Nothing here waits on a query: each answer comes back as a queued signal, an answer to an
older filter is dropped, and while one query runs only the newest filter asked for
meanwhile is kept (typing five letters runs at most two queries). Loaded with the history
window, when a person first opens it (`control.history.HistoryControl.open`).
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from qoder_desktop.domain.history import HistoryFilter, HistoryRow
from qoder_desktop.store.history import PAGE_SIZE, HistoryReader
from qoder_desktop.ui.control.relay import Relay, deliver
from qoder_desktop.ui.plain_text import tooltip
from qoder_desktop.ui.windows.history_window import COLUMNS, row_cells

log = logging.getLogger(__name__)

_Index = QModelIndex | QPersistentModelIndex


class HistoryModel(QAbstractTableModel):
    """The ledger's requests matching a filter, newest first, fetched a page at a time.

    Signals:
        first_page_shown(): the first page of the current filter is in the model.
        failed(str): a query failed (the message says why).
    """

    first_page_shown = Signal()
    failed = Signal(str)

    def __init__(self, reader: HistoryReader, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reader = reader
        self._relay = Relay(self)
        self._relay.arrived.connect(lambda handler, value: handler(value),
                                    Qt.ConnectionType.QueuedConnection)
        self._rows: list[HistoryRow] = []
        self._filter = HistoryFilter()
        self._generation = 0
        self._busy = False
        self._wanted: HistoryFilter | None = None
        self._at_end = True

    # -- what the view asks ------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's API
        """Rows fetched so far."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's API
        """The history's columns."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """A cell's text (and tooltip); UserRole gives the row's `HistoryRow`."""
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.UserRole:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return row_cells(row)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:  # agent data: never read as rich text
            return tooltip(row_cells(row)[index.column()])
        return None

    def canFetchMore(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008
        """True while older rows of the filter may remain."""
        return not parent.isValid() and not self._at_end and not self._busy

    def fetchMore(self, parent: _Index = QModelIndex()) -> None:  # noqa: B008
        """Ask for the next page (it arrives later; nothing waits here)."""
        if parent.isValid() or self._at_end or self._busy or not self._rows:
            return
        self._busy = True
        generation = self._generation
        deliver(self._relay, self._reader.page(self._filter, self._rows[-1].seq),
                 lambda value: self._page_arrived(generation, value, first=False))

    # -- what the controller asks ------------------------------------------------------

    @property
    def filter(self) -> HistoryFilter:
        """The filter the rows shown match."""
        return self._filter

    def row_at(self, row: int) -> HistoryRow | None:
        """The `HistoryRow` shown at `row`, or None."""
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def set_filter(self, flt: HistoryFilter) -> None:
        """Show the rows matching `flt` (the first page is asked for at once, or as soon
        as the query running now ends)."""
        if self._busy:
            self._wanted = flt
            return
        self._busy = True
        self._generation += 1
        self._filter, generation = flt, self._generation
        deliver(self._relay, self._reader.page(flt),
                 lambda value: self._page_arrived(generation, value, first=True))

    def _page_arrived(self, generation: int, value: Any, *, first: bool) -> None:
        self._busy = False
        wanted, self._wanted = self._wanted, None
        if generation == self._generation:
            if isinstance(value, BaseException):
                log.warning("history query failed: %s", value)
                self.failed.emit(f"Reading the history failed: {value}")
            elif first:
                self.beginResetModel()
                self._rows = list(value)
                self._at_end = len(value) < PAGE_SIZE
                self.endResetModel()
                if wanted is None:
                    self.first_page_shown.emit()
            elif value:
                start = len(self._rows)
                self.beginInsertRows(QModelIndex(), start, start + len(value) - 1)
                self._rows.extend(value)
                self._at_end = len(value) < PAGE_SIZE
                self.endInsertRows()
            else:
                self._at_end = True
        if wanted is not None:
            self.set_filter(wanted)
