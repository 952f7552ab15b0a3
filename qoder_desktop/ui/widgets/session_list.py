"""The table model behind the main window's sessions list."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6 import QtCore, QtGui  # (QBrush, QColor, QFont: built after the frame)
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QTableView

from qoder_desktop.domain.kinds import Backend, SessionState
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.plain_text import tooltip
from qoder_desktop.ui.qt_numbers import (
    ALIGN_CENTER,
    DISPLAY_ROLE,
    ELIDE_MIDDLE,
    FONT_ROLE,
    FOREGROUND_ROLE,
    TEXT_ALIGNMENT_ROLE,
    TOOLTIP_ROLE,
    USER_ROLE,
)

if TYPE_CHECKING:  # pydantic and the models load after the first paint
    from qoder_desktop.domain.models import SessionInfo

_Index = QModelIndex | QPersistentModelIndex

COLUMNS = ("Session", "Backend", "Folder", "Mode", "State", "Pending")
COL_NAME, COL_BACKEND, COL_CWD, COL_MODE, COL_STATE, COL_PENDING = range(len(COLUMNS))

SESSION_ID_ROLE = USER_ROLE + 1

NAME_WIDTH_MIN = 120
"""The name column takes the width the other columns leave, at least this; longer names
are elided in the middle (both ends stay readable) and shown whole in the tooltip."""
FOLDER_WIDTH_MIN = 80
FOLDER_WIDTH_MAX = 120
"""The folder column (the folder's last part) grows with the widest one within these;
a longer one is elided in the middle, and the cell's tooltip has the full path."""
FIXED_WIDTHS = {COL_BACKEND: 74, COL_MODE: 88, COL_STATE: 76, COL_PENDING: 72}

BACKEND_LABELS = {Backend.CLAUDE: "Claude", Backend.QODER: "Qoder", Backend.EXTERNAL: "External",
                  Backend.TERMINAL: "Terminal"}
STATE_LABELS = {
    SessionState.STARTING: "Starting…",
    SessionState.RUNNING: "Running",
    SessionState.WAITING: "Waiting",
    SessionState.IDLE: "Idle",
    SessionState.STOPPED: "Stopped",
    SessionState.FAILED: "Failed",
}
STATE_COLORS = {
    SessionState.RUNNING: "#2F9E44",
    SessionState.WAITING: "#E8590C",
    SessionState.FAILED: "#E03131",
    SessionState.STOPPED: "#868E96",
}


def folder_part(path: str) -> str:
    """The folder's last part (what tells two sessions of one scenario apart)."""
    trimmed = path.rstrip("/\\") or path
    return os.path.basename(trimmed) or trimmed


def host_order(info: SessionInfo) -> tuple[bool, str]:
    """Where a session's host puts its row: this computer's sessions first, then each
    remote host's together, by host name."""
    return (info.host is not None, info.host or "")


def short_path(path: str) -> str:
    """`path` with the home folder shown as `~`."""
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


class SessionTableModel(QAbstractTableModel):
    """Sessions as rows: name, backend, folder, mode, state and pending requests.

    Rows are grouped by host (`host_order`: this computer's sessions first, then each
    remote host's together) and keep the order sessions were given in within a host;
    `update_session` changes a row in place or adds a new one at the end of its host's.
    A change of the pending counts repaints only the pending cells whose count changed
    (the counts change with every request added or answered).
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._sessions: list[SessionInfo] = []
        self._rows: dict[str, int] = {}
        self._pending: dict[str, int] = {}
        self._bold: QtGui.QFont | None = None  # (made with the first row, as the brushes)
        self._brushes: dict[SessionState, QtGui.QBrush] = {}  # (made with the first row)

    # -- Qt model interface ------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._sessions)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: QtCore.Qt.Orientation,
                   role: int = DISPLAY_ROLE) -> Any:
        """The column titles (before the model is attached, the header shows the same
        from `column_titles`)."""
        if orientation == QtCore.Qt.Orientation.Horizontal:
            if role == DISPLAY_ROLE and 0 <= section < len(COLUMNS):
                return COLUMNS[section]
            if role == TEXT_ALIGNMENT_ROLE and section == COL_PENDING:
                return ALIGN_CENTER
        return None

    def data(self, index: _Index, role: int = DISPLAY_ROLE) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._sessions):
            return None
        info = self._sessions[index.row()]
        column = index.column()
        pending = self._pending.get(info.session_id, 0)
        if role == DISPLAY_ROLE:
            return self._display(info, column, pending)
        if role == SESSION_ID_ROLE:
            return info.session_id
        if role == TOOLTIP_ROLE:
            if column == COL_CWD:
                return tooltip(info.cwd)
            return self._tooltip(info, pending)
        if role == TEXT_ALIGNMENT_ROLE and column == COL_PENDING:
            return ALIGN_CENTER
        if role == FOREGROUND_ROLE:
            if not self._brushes:
                self._brushes = {state: QtGui.QBrush(QtGui.QColor(color))
                                 for state, color in STATE_COLORS.items()}
            if column == COL_STATE and info.state in self._brushes:
                return self._brushes[info.state]
            if column == COL_PENDING and pending:
                return self._brushes[SessionState.WAITING]
        if role == FONT_ROLE and (
                column == COL_NAME or (column == COL_PENDING and pending)):
            return self.name_font()
        return None

    @staticmethod
    def _display(info: SessionInfo, column: int, pending: int) -> str:
        if column == COL_NAME:
            return make_visible(info.name)
        if column == COL_BACKEND:
            return BACKEND_LABELS.get(info.backend, info.backend.value)
        if column == COL_CWD:
            return make_visible(folder_part(info.cwd))
        if column == COL_MODE:
            return info.permission_mode.value
        if column == COL_STATE:
            return STATE_LABELS.get(info.state, info.state.value)
        return str(pending) if pending else "–"

    @staticmethod
    def _tooltip(info: SessionInfo, pending: int) -> str:
        lines = [info.name, *([f"Host: {info.host}"] if info.host else []),
                 f"Folder: {info.cwd}",
                 f"Backend: {BACKEND_LABELS.get(info.backend, info.backend.value)}",
                 f"Mode: {info.permission_mode.value}",
                 f"State: {STATE_LABELS.get(info.state, info.state.value)}",
                 f"Pending requests: {pending}"]
        if info.error:
            lines.append(f"Error: {info.error}")
        return tooltip("\n".join(lines))

    # -- updates -----------------------------------------------------------------------

    def set_sessions(self, sessions: list[SessionInfo]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._sessions = sorted(sessions, key=host_order)  # stable: order kept in a host
        self._index_rows()
        self.endResetModel()

    def _index_rows(self) -> None:
        self._rows = {}
        for row, info in enumerate(self._sessions):
            self._rows.setdefault(info.session_id, row)

    def update_session(self, info: SessionInfo) -> int:
        """Replace the row of `info.session_id` (or add it at the end of its host's rows);
        returns its row."""
        row = self.row_of(info.session_id)
        if row is None:
            key = host_order(info)
            row = sum(1 for shown in self._sessions if host_order(shown) <= key)
            self.beginInsertRows(QModelIndex(), row, row)
            self._sessions.insert(row, info)
            self._index_rows()
            self.endInsertRows()
            return row
        self._sessions[row] = info
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
        return row

    def remove_session(self, session_id: str) -> None:
        """Take the row of `session_id` out (no row: nothing changes)."""
        row = self.row_of(session_id)
        if row is None:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._sessions[row]
        self._pending.pop(session_id, None)
        self._index_rows()
        self.endRemoveRows()

    def set_pending_counts(self, counts: dict[str, int]) -> None:
        """Set how many requests wait in each session (sessions not named have none).

        Only the pending cells of sessions whose count changed are reported as changed.
        """
        if counts == self._pending:
            return
        old, self._pending = self._pending, {sid: n for sid, n in counts.items() if n}
        changed = {sid for sid in old.keys() | self._pending.keys()
                   if old.get(sid, 0) != self._pending.get(sid, 0)}
        rows = sorted(row for sid in changed if (row := self._rows.get(sid)) is not None)
        for row in rows:
            cell = self.index(row, COL_PENDING)
            self.dataChanged.emit(cell, cell)

    # -- queries -----------------------------------------------------------------------

    def row_of(self, session_id: str) -> int | None:
        """The row showing `session_id`, or None."""
        return self._rows.get(session_id)

    def session_at(self, row: int) -> SessionInfo | None:
        """The session shown in `row`, or None."""
        return self._sessions[row] if 0 <= row < len(self._sessions) else None

    def session(self, session_id: str) -> SessionInfo | None:
        """The session with `session_id`, or None."""
        row = self.row_of(session_id)
        return None if row is None else self._sessions[row]

    def pending_count(self, session_id: str) -> int:
        """How many requests wait in `session_id`."""
        return self._pending.get(session_id, 0)

    def sessions(self) -> list[SessionInfo]:
        """Every session, in row order."""
        return list(self._sessions)

    def name_font(self) -> QtGui.QFont:
        """The font the name column is drawn in."""
        if self._bold is None:
            self._bold = QtGui.QFont()
            self._bold.setBold(True)
        return self._bold


def column_titles(parent: QObject) -> QStandardItemModel:
    """The sessions list's column titles as a model of their own, for its header until
    the rows' model comes (`attach_sessions_model`, after the first frame).

    Qt's own model answers the header without Python: a call of the Python model's
    `headerData` is given a `Qt.Orientation`, whose first use builds PySide6's whole
    `Qt` namespace (~25 ms). From then on the rows' model answers the same titles.
    """
    titles = QStandardItemModel(0, len(COLUMNS), parent)
    for column, title in enumerate(COLUMNS):
        item = QStandardItem(title)
        if column == COL_PENDING:
            item.setData(ALIGN_CENTER, TEXT_ALIGNMENT_ROLE)
        titles.setHorizontalHeaderItem(column, item)
    return titles


def setup_sessions_view(view: QTableView) -> None:
    """Before the first frame: no row header, fixed row height, the column titles (from
    `column_titles`) with the name column taking the width the others leave (so no
    horizontal scroll bar at the pane's usual width); the rows come with
    `attach_sessions_model`, after the frame."""
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(28)
    view.setProperty("textElideMode", ELIDE_MIDDLE)  # (`qt_numbers`: no `Qt` namespace yet)
    view.horizontalHeader().setModel(column_titles(view))
    _size_columns(view.horizontalHeader())


def attach_sessions_model(view: QTableView, model: SessionTableModel) -> None:
    """Show `model`'s rows in `view` (set up by `setup_sessions_view`); the header then
    shows the same titles from `model`, its columns sized as before.

    Not before the first frame: Qt then calls the model's `headerData`, whose
    `Qt.Orientation` argument builds PySide6's whole `Qt` namespace (~25 ms).
    """
    titles = view.horizontalHeader().model()
    view.setModel(model)
    if titles is not None and titles is not model:
        titles.deleteLater()  # (the header has `model` now: `column_titles` is done)
    _size_columns(view.horizontalHeader())


def _size_columns(header: QHeaderView) -> None:
    header.setHighlightSections(False)
    header.setMinimumSectionSize(40)
    header.setStretchLastSection(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setSectionResizeMode(COL_NAME, QHeaderView.ResizeMode.Stretch)
    header.resizeSection(COL_CWD, FOLDER_WIDTH_MIN)
    for column, width in FIXED_WIDTHS.items():
        header.resizeSection(column, width)


def session_details(info: SessionInfo, pending: int) -> str:
    """The line under the session's title: backend, folder, mode, state, pending, error."""
    parts = [BACKEND_LABELS.get(info.backend, info.backend.value),
             make_visible(short_path(info.cwd)), f"mode {info.permission_mode.value}",
             STATE_LABELS.get(info.state, info.state.value)]
    if pending:
        parts.append(f"{pending} pending")
    details = "  ·  ".join(parts)
    return f"{details}\n{info.error}" if info.error else details


def fit_folder_column(view: QTableView, model: SessionTableModel) -> None:
    """Widen the folder column for the widest folder name (within bounds; longer ones
    are elided in the middle)."""
    metrics = QtGui.QFontMetrics(view.font())
    widest = max((metrics.horizontalAdvance(make_visible(folder_part(info.cwd)))
                  for info in model.sessions()), default=0)
    wanted = min(FOLDER_WIDTH_MAX, max(FOLDER_WIDTH_MIN, widest + 16))
    header = view.horizontalHeader()
    if header.sectionSize(COL_CWD) < wanted:
        header.resizeSection(COL_CWD, wanted)
