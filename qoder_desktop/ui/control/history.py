"""The decision history's controller: opens the history window and answers its intents.

The window, its model (`history_model.HistoryModel`) and the store's reader load when a
person first opens the history, not with the app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from qoder_desktop.ui.control.relay import Relay, deliver

if TYPE_CHECKING:  # (loaded when the history is first opened)
    from qoder_desktop.domain.history import HistoryFilter
    from qoder_desktop.store.history import HistoryReader
    from qoder_desktop.store.ledger_export import ExportFormat
    from qoder_desktop.ui.control.history_model import HistoryModel
    from qoder_desktop.ui.windows.history_window import HistoryWindow


class HistoryControl:
    """Opens the history window (one at a time) and answers what it asks, off the loop."""

    def __init__(self, ledger_path: Path | None, parent: QWidget | None = None) -> None:
        self._path = ledger_path
        self._parent = parent
        self.window: HistoryWindow | None = None
        self.model: HistoryModel | None = None
        self._reader: HistoryReader | None = None
        self._relay = Relay()
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
            from qoder_desktop.store.history import HistoryReader
            from qoder_desktop.ui.control.history_model import HistoryModel
            from qoder_desktop.ui.windows.history_window import HistoryWindow

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
        deliver(self._relay, self._reader.sessions(),
                 lambda value: None if isinstance(value, BaseException)
                 or self.window is not window  # closed meanwhile: nothing to show it in
                 else window.set_sessions(value))
        deliver(self._relay, self._reader.hosts(),
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
        from qoder_desktop.domain.history import HistoryTotals

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

        deliver(self._relay, self._reader.totals(flt), shown)

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

        deliver(self._relay, rules_future, shown)

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
        deliver(self._relay, self._reader.export(self.model.filter, path, fmt_checked,
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
