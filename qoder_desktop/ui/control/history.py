"""The decision history: a Qt model over the ledger that fetches what is shown, and the
controller that opens the history window and answers its intents.

`HistoryModel` asks the store's `HistoryReader` (its own thread and read-only SQLite
connection) for one page at a time, newest first: the first page when the filter
changes, the next when the view scrolls near the end (`canFetchMore`/`fetchMore`).
Nothing here waits on a query: each answer comes back as a queued signal, an answer to an
older filter is dropped, and while one query runs only the newest filter asked for
meanwhile is kept (typing five letters runs at most two queries).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import QWidget

from qoder_desktop.domain.history import HistoryFilter, HistoryRow, HistoryTotals
from qoder_desktop.store.history import PAGE_SIZE, HistoryReader
from qoder_desktop.store.ledger_export import ExportFormat
from qoder_desktop.ui.plain_text import tooltip
from qoder_desktop.ui.windows.history_window import COLUMNS, HistoryWindow, row_cells

log = logging.getLogger(__name__)

_Index = QModelIndex | QPersistentModelIndex


class _Relay(QObject):
    """Carries a worker thread's answer to the GUI thread (connected queued: an answer
    always comes in a later loop turn, even one ready before its callback was added)."""

    arrived = Signal(object, object)


def _deliver(relay: _Relay, future: Future[Any], handler: Callable[[Any], None]) -> None:
    """Call `handler(result_or_exception)` on the GUI thread once `future` is done."""
    def done(fut: Future[Any]) -> None:
        try:
            value: Any = fut.result()
        except BaseException as exc:
            value = exc
        # RuntimeError: the window (and its model) closed meanwhile; nobody waits.
        with contextlib.suppress(RuntimeError):
            relay.arrived.emit(handler, value)

    future.add_done_callback(done)


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
        self._relay = _Relay(self)
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
        _deliver(self._relay, self._reader.page(self._filter, self._rows[-1].seq),
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
        _deliver(self._relay, self._reader.page(flt),
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


class HistoryControl:
    """Opens the history window (one at a time) and answers what it asks, off the loop."""

    def __init__(self, ledger_path: Path | None, parent: QWidget | None = None) -> None:
        self._path = ledger_path
        self._parent = parent
        self.window: HistoryWindow | None = None
        self.model: HistoryModel | None = None
        self._reader: HistoryReader | None = None
        self._relay = _Relay()
        self._relay.arrived.connect(lambda handler, value: handler(value),
                                    Qt.ConnectionType.QueuedConnection)
        self._open_request: str | None = None
        self._counting = False
        self._count_wanted: HistoryFilter | None = None
        self.on_window: Callable[[HistoryWindow], None] | None = None
        """Called with each new window (the wiring connects its signals there)."""

    def open(self) -> HistoryWindow | None:
        """Show the history window (raised when it is already open); None without a ledger."""
        if self._path is None:
            return None
        if self.window is None:
            self._reader = HistoryReader(self._path)
            self.model = HistoryModel(self._reader)
            window = HistoryWindow(self.model)
            self.window = window
            self.model.failed.connect(window.show_problem)
            self.model.first_page_shown.connect(self._page_shown)
            window.filter_changed.connect(self.set_filter)
            window.row_opened.connect(self.open_row)
            window.export_requested.connect(self.export)
            window.refresh_requested.connect(self.refresh)
            window.closed.connect(self._closed)
            if self.on_window is not None:
                self.on_window(window)
        self.refresh()  # opened again: what was decided since shows too
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()
        return self.window

    def refresh(self) -> None:
        """Read the hosts, the sessions, the rows and the totals again (new decisions
        appear)."""
        if self._reader is None or self.window is None:
            return
        window = self.window
        self.set_filter(window.current_filter())  # the rows first: they are what is seen
        _deliver(self._relay, self._reader.sessions(),
                 lambda value: None if isinstance(value, BaseException)
                 or self.window is not window  # closed meanwhile: nothing to show it in
                 else window.set_sessions(value))
        _deliver(self._relay, self._reader.hosts(),
                 lambda value: None if isinstance(value, BaseException)
                 or self.window is not window
                 else window.set_hosts(value))

    def set_filter(self, flt: HistoryFilter) -> None:
        """Show the rows of `flt`; they are counted once its first page is shown (the
        rows first: on two cores a count beside the page query slows the page)."""
        if self.model is None or self._reader is None:
            return
        self.model.set_filter(flt)

    def _page_shown(self) -> None:
        if self.model is not None:
            self._count(self.model.filter)

    def _count(self, flt: HistoryFilter) -> None:
        """Count `flt` (while a count runs, only the newest filter asked for meanwhile is
        counted next)."""
        if self._reader is None:
            return
        if self._counting:
            self._count_wanted = flt
            return
        self._counting = True

        def shown(value: Any) -> None:
            self._counting = False
            wanted, self._count_wanted = self._count_wanted, None
            if wanted is not None:
                self._count(wanted)
            elif self.window is None:
                return
            elif isinstance(value, BaseException):
                self.window.show_problem(f"Counting the history failed: {value}")
            elif isinstance(value, HistoryTotals):
                self.window.set_totals(value)

        _deliver(self._relay, self._reader.totals(flt), shown)

    def open_row(self, request_id: str) -> None:
        """Show one request whole, with the rules it ran under or granted."""
        if self._reader is None:
            return
        self._open_request = request_id
        entry_future = self._reader.entry(request_id)
        rules_future = self._reader.granting_rules(request_id)

        def shown(value: Any) -> None:
            if self.window is None or self._open_request != request_id:
                return
            if isinstance(value, BaseException):
                self.window.show_problem(f"Reading the request failed: {value}")
                return
            entry = entry_future.result()
            rules, reach = value
            self.window.show_entry(None if entry is None else entry.model_dump(mode="json"),
                                   rules, reach)

        _deliver(self._relay, rules_future, shown)

    def rule_revoked(self, _rule_id: str) -> None:
        """Show the open row's rules again (the revoke went through the sessions' path)."""
        if self._open_request is not None:
            self.open_row(self._open_request)

    def export(self, path: str, fmt: str) -> None:
        """Write the rows of the current filter to `path` on a thread of its own."""
        if self._reader is None or self.model is None or self.window is None:
            return
        window = self.window
        window.set_export_progress(0, 0)

        def show_progress(counts: tuple[int, int]) -> None:
            if self.window is window:
                window.set_export_progress(*counts)

        def progress(done: int, total: int) -> None:  # on the export's thread
            self._relay.arrived.emit(show_progress, (done, total))

        def finished(value: Any) -> None:
            if self.window is not window:  # closed meanwhile: the file is written anyway
                return
            if isinstance(value, BaseException):
                window.export_finished(f"Export failed: {value}", ok=False)
            else:
                window.export_finished(f"Wrote {value:,} requests to {path}.", ok=True)

        fmt_checked: ExportFormat = "jsonl" if fmt == "jsonl" else "csv"
        _deliver(self._relay, self._reader.export(self.model.filter, path, fmt_checked,
                                                  progress), finished)

    def _closed(self) -> None:
        window, self.window = self.window, None
        reader, self._reader = self._reader, None
        self.model = None
        self._open_request = None
        self._counting = False
        self._count_wanted = None
        if window is not None:
            window.deleteLater()
        if reader is not None:
            reader.close()

    def close(self) -> None:
        """Close the window and its reader (at quit)."""
        if self.window is not None:
            self.window.close()
        self._closed()
