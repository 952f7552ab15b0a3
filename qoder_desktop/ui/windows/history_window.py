"""The decision history window: every request, filtered, counted, opened whole, exported.

A view: it is given a model (the rows, fetched by the app a page at a time), the totals,
the sessions and one entry at a time, and says what the person wants through signals. It
never touches storage; export files are written by the app off the GUI thread.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.domain.history import (
    THIS_COMPUTER,
    HistoryFilter,
    HistoryRow,
    HistoryTotals,
    since_for,
)
from qoder_desktop.domain.revocation import RevokeReach
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui import icons
from qoder_desktop.ui.plain_text import tooltip
from qoder_desktop.ui.windows.history_detail import (
    OUTCOME_WORDS,
    HistoryDetail,
    local_time,
    waited,
)

if TYPE_CHECKING:
    from qoder_desktop.domain.models import SessionRule

COLUMNS = ("Received", "Host", "Session", "Tool", "Input as asked", "Outcome", "Decided by",
           "Waited", "As run")
"""The history list's columns."""

DECIDERS: tuple[tuple[str, str | None], ...] = (
    ("Anyone", None), ("You", "user"), ("The agent's CLI (its grant)", "cli"),
    ("A session rule you made", "session_rule"), ("Nobody: withdrawn", "withdrawn"),
    ("Nobody: an error", "error"))
WHEN: tuple[tuple[str, str], ...] = (("Any time", "any"), ("Today", "today"),
                                     ("Last 7 days", "week"))


_LEAD_KEY = re.compile(r'^\{"(?:command|file_path|notebook_path|pattern|url|query)": "?')
_MAIN_KEYS = ("command", "file_path", "notebook_path", "pattern", "url", "query")


def _one_line(text: str | None, limit: int = 160) -> str:
    """An input in one line: the command (or path, pattern…) alone when it is whole."""
    try:
        value = json.loads(text or "")
    except ValueError:  # cut short: drop the key's own text
        value = None
    if isinstance(value, dict):
        main = next((value[key] for key in _MAIN_KEYS if isinstance(value.get(key), str)),
                    None)
        text = main if main is not None else text
    flat = _LEAD_KEY.sub("", " ".join((text or "").split()), count=1)
    return make_visible(flat if len(flat) <= limit else flat[:limit] + "…")


THIS_COMPUTER_WORDS = "This computer"
"""How the history names this machine (a request's host is None)."""


def host_words(host: str | None) -> str:
    """A host as the history shows it: its name (hidden characters made visible), or
    `THIS_COMPUTER_WORDS` for this machine."""
    return make_visible(host) if host else THIS_COMPUTER_WORDS


@lru_cache(maxsize=8192)
def row_cells(row: HistoryRow) -> tuple[str, ...]:
    """The texts of one history row, column by column (see `COLUMNS`)."""
    if row.outcome is None:
        ran = ""
    elif row.ran is None:
        ran = "did not run"
    else:
        ran = "edited: " + _one_line(row.ran) if row.edited else "as asked"
    return (local_time(row.received_at), host_words(row.host),
            make_visible(row.session_name), row.tool_name,
            _one_line(row.asked), OUTCOME_WORDS.get(row.status, row.status),
            make_visible(row.who), waited(row.latency_ms), ran)


def totals_text(totals: HistoryTotals) -> str:
    """The counts line: how many, per outcome and per decider."""
    outcomes = " · ".join(f"{OUTCOME_WORDS.get(k, k)} {v:,}" for k, v in
                          sorted(totals.by_outcome.items(), key=lambda kv: -kv[1]))
    deciders = " · ".join(f"{k} {v:,}" for k, v in
                          sorted(totals.by_decider.items(), key=lambda kv: -kv[1]))
    noun = "request" if totals.total == 1 else "requests"
    if not totals.total:
        return "No requests match."
    return f"{totals.total:,} {noun}: {outcomes}\nDecided by: {deciders}"


def headline_text(totals: HistoryTotals) -> str:
    """The answer at a glance: how much the person approved, and what ran without them."""
    return (f"You approved {totals.approved_by_you:,} · ran without you "
            f"{totals.ran_without_you:,} (the agent's CLI, under its session grants)")


class HistoryWindow(QWidget):
    """Filters on top, the list and the open row side by side, counts and export below.

    Signals:
        filter_changed(HistoryFilter): show (and count) the rows of this filter.
        row_opened(str): show this request whole.
        export_requested(str, str): write the current view to this path ("csv"/"jsonl").
        revoke_requested(str): revoke the session rule with this id.
        refresh_requested(): read the ledger again (F5).
        closed(): the window was closed.
    """

    filter_changed = Signal(object)
    row_opened = Signal(str)
    export_requested = Signal(str, str)
    revoke_requested = Signal(str)
    refresh_requested = Signal()
    closed = Signal()

    def __init__(self, model: QAbstractItemModel, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("historyWindow")
        self.setWindowTitle("Decision history — Qoder Desktop")
        self.setWindowIcon(icons.app_icon())
        self.resize(1240, 700)
        self._model = model
        self._file_dialog: QFileDialog | None = None
        self.totals: HistoryTotals | None = None
        """The counts shown (None until the first arrive)."""
        self._build()
        self._connect()

    def _build(self) -> None:
        self.host_combo = QComboBox(self)
        self.host_combo.addItem("All hosts", None)
        self.session_combo = QComboBox(self)
        self.session_combo.addItem("All sessions", None)
        self.outcome_combo = QComboBox(self)
        self.outcome_combo.addItem("Any outcome", None)
        for value, words in OUTCOME_WORDS.items():
            self.outcome_combo.addItem(words[:1].upper() + words[1:], value)
        self.decider_combo = QComboBox(self)
        for words, decider in DECIDERS:
            self.decider_combo.addItem(words, decider)
        self.when_combo = QComboBox(self)
        for words, choice in WHEN:
            self.when_combo.addItem(words, choice)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search tool, command, rule, message…")
        self.search.setClearButtonEnabled(True)
        filters = QHBoxLayout()
        for label, widget in (("Host", self.host_combo), ("Session", self.session_combo),
                              ("Outcome", self.outcome_combo),
                              ("Decided by", self.decider_combo), ("When", self.when_combo)):
            filters.addWidget(QLabel(label, self))
            filters.addWidget(widget)
        filters.addWidget(self.search, 1)
        self.headline = QLabel("", self)
        self.headline.setObjectName("historyHeadline")
        font = self.headline.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.headline.setFont(font)
        self.totals_label = QLabel("Counting…", self)
        self.totals_label.setObjectName("historyTotals")
        self.totals_label.setWordWrap(True)
        self.totals_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableView(self)
        self.table.setObjectName("historyTable")
        self.table.setModel(self._model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        header = self.table.horizontalHeader()
        for column, width in enumerate((140, 100, 90, 60, 230, 140, 240, 64, 90)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(column, width)
        header.setStretchLastSection(True)
        self.detail = HistoryDetail(self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([860, 420])
        self.export_csv = QPushButton("Export view as CSV…", self)
        self.export_jsonl = QPushButton("Export view as JSONL…", self)
        self.progress = QProgressBar(self)
        self.progress.setVisible(False)
        self.status = QLabel("", self)
        self.status.setObjectName("historyStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # errors and file names
        self.status.setWordWrap(True)
        bottom = QHBoxLayout()
        bottom.addWidget(self.export_csv)
        bottom.addWidget(self.export_jsonl)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.status, 1)
        described: tuple[tuple[QWidget, str, str], ...] = (
                (self.host_combo, "Host",
                 "Show the decisions of requests from one host, or from this computer"),
                (self.session_combo, "Session", "Show the decisions of one session"),
                (self.outcome_combo, "Outcome", "Show only decisions with this outcome"),
                (self.decider_combo, "Decided by",
                 "Show only what you, a session rule or the agent's CLI decided"),
                (self.when_combo, "When", "Show only decisions made in this time"),
                (self.search, "Search", "Show only rows whose tool, input, rule or message "
                                        "holds this text"),
                (self.table, "Decisions", "Every request with its outcome, newest first; "
                                          "select one to see it whole"),
                (self.export_csv, "Export view as CSV",
                 "Write the rows shown to a CSV file, as qoder-desktop ledger export does"),
                (self.export_jsonl, "Export view as JSONL",
                 "Write the rows shown to a JSONL file, as qoder-desktop ledger export does"))
        for control, name, description in described:
            control.setAccessibleName(name)
            control.setAccessibleDescription(description)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.headline)
        layout.addWidget(self.totals_label)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bottom)

    def _connect(self) -> None:
        for combo in (self.host_combo, self.session_combo, self.outcome_combo, self.decider_combo,
                      self.when_combo):
            combo.currentIndexChanged.connect(self._emit_filter)
        self.search.textChanged.connect(self._emit_filter)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.table.activated.connect(self._open_index)
        self.detail.revoke_requested.connect(self.revoke_requested)
        self.export_csv.clicked.connect(lambda: self.choose_export("csv"))
        self.export_jsonl.clicked.connect(lambda: self.choose_export("jsonl"))
        QShortcut(QKeySequence.StandardKey.Find, self, self.search.setFocus)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close)
        QShortcut(QKeySequence.StandardKey.Refresh, self, self.refresh_requested.emit)

    # -- filters -----------------------------------------------------------------------

    def current_filter(self) -> HistoryFilter:
        """The filter the controls say."""
        return HistoryFilter(
            host=self.host_combo.currentData(),
            session_id=self.session_combo.currentData(),
            outcome=self.outcome_combo.currentData(),
            decided_by=self.decider_combo.currentData(),
            text=self.search.text(),
            since=since_for(self.when_combo.currentData() or "any"))

    def _emit_filter(self, *_args: Any) -> None:
        self.filter_changed.emit(self.current_filter())

    def set_sessions(self, sessions: list[tuple[str, str]]) -> None:
        """Offer these (id, name) sessions in the session filter (keeps the choice)."""
        current = self.session_combo.currentData()
        self.session_combo.blockSignals(True)
        self.session_combo.clear()
        self.session_combo.addItem("All sessions", None)
        for session_id, name in sessions:
            self.session_combo.addItem(make_visible(name or session_id), session_id)
            self.session_combo.setItemData(self.session_combo.count() - 1,
                                           tooltip(session_id), Qt.ItemDataRole.ToolTipRole)
        found = self.session_combo.findData(current)
        self.session_combo.setCurrentIndex(max(found, 0))
        self.session_combo.blockSignals(False)
        if current is not None and found < 0:
            self._emit_filter()

    def set_hosts(self, hosts: list[str]) -> None:
        """Offer these hosts (`THIS_COMPUTER` for this machine) in the host filter (keeps
        the choice)."""
        current = self.host_combo.currentData()
        self.host_combo.blockSignals(True)
        self.host_combo.clear()
        self.host_combo.addItem("All hosts", None)
        for host in hosts:
            self.host_combo.addItem(host_words(host or None), host)
            if host != THIS_COMPUTER:
                self.host_combo.setItemData(self.host_combo.count() - 1, tooltip(host),
                                            Qt.ItemDataRole.ToolTipRole)
        found = self.host_combo.findData(current)
        self.host_combo.setCurrentIndex(max(found, 0))
        self.host_combo.blockSignals(False)
        if current is not None and found < 0:
            self._emit_filter()

    def set_totals(self, totals: HistoryTotals) -> None:
        """Show how many requests match, per outcome and per decider."""
        self.totals = totals
        self.headline.setText(headline_text(totals))
        self.totals_label.setText(totals_text(totals))

    def show_problem(self, text: str) -> None:
        """Say that something could not be read."""
        self.status.setText(text)

    # -- rows --------------------------------------------------------------------------

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._open_index(current)

    def _open_index(self, index: QModelIndex) -> None:
        row = index.data(Qt.ItemDataRole.UserRole) if index.isValid() else None
        if isinstance(row, HistoryRow):
            self.row_opened.emit(row.request_id)

    def open_row(self, row: int) -> None:
        """Select (and so open) the row at `row`."""
        self.table.selectRow(row)

    def show_entry(self, entry: dict[str, Any] | None, rules: list[SessionRule],
                   reach: RevokeReach) -> None:
        """Show one request whole, and the rules it ran under or granted."""
        self.detail.show_entry(entry, rules, reach)

    # -- export ------------------------------------------------------------------------

    def choose_export(self, fmt: str) -> None:
        """Ask where to write the current view (a non-modal file dialog)."""
        suffix = "jsonl" if fmt == "jsonl" else "csv"
        dialog = QFileDialog(self, "Export the requests shown", f"history.{suffix}",
                             f"{suffix.upper()} files (*.{suffix})")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix(suffix)
        dialog.fileSelected.connect(lambda path: self.export_requested.emit(path, suffix))
        self._file_dialog = dialog
        dialog.open()

    def set_export_progress(self, done: int, total: int) -> None:
        """Show an export's progress (total 0: not known yet)."""
        self.export_csv.setEnabled(False)
        self.export_jsonl.setEnabled(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(done)
        self.status.setText(f"Exporting {done:,} of {total:,}…" if total else "Exporting…")

    def export_finished(self, text: str, *, ok: bool) -> None:
        """An export ended; say how."""
        self.progress.setVisible(False)
        self.export_csv.setEnabled(True)
        self.export_jsonl.setEnabled(True)
        self.status.setProperty("ok", ok)
        self.status.setText(text)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Tell the app, which lets the window and its reader go."""
        super().closeEvent(event)
        self.closed.emit()

