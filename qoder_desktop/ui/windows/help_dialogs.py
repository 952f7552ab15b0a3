"""The Help menu's dialogs, Keyboard shortcuts and About (`help_menu.HelpMenu` opens them).

The shortcuts are the README's keyboard table plus the main window's and the new-session
form's keys. About shows what `diagnostics.about.AboutInfo` collected (version, SDKs,
CLIs, folders) and a link that opens the log; the window is given the function that
collects it (`HelpMenu.about_source`), as the app knows the folders and the view does not.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.ui.plain_text import set_plain

if TYPE_CHECKING:
    from qoder_desktop.diagnostics.about import AboutInfo

SHORTCUTS: tuple[tuple[str, str, str], ...] = (
    ("Main window", "Ctrl+N", "start a new session"),
    ("Main window", "Ctrl+L", "write a follow-up prompt for the selected session"),
    ("Main window", "Ctrl+Return", "send the follow-up prompt"),
    ("Main window", "Ctrl+.", "interrupt the selected session's turn"),
    ("Main window", "Ctrl+Shift+W", "stop the selected session"),
    ("Main window", "Ctrl+O", "open the oldest request that waits for you"),
    ("Main window", "Ctrl+H", "the decision history"),
    ("Main window", "Ctrl+,", "settings"),
    ("Main window", "F1", "this list"),
    ("Main window", "Ctrl+Q", "quit (asks first while requests wait)"),
    ("New session", "Ctrl+Return", "start the session"),
    ("New session", "Escape", "close the form"),
    ("Approval dialog", "Ctrl+Return", "allow once (with the edited input)"),
    ("Approval dialog", "Ctrl+Shift+Return", "allow for this session"),
    ("Approval dialog", "Escape", "deny (with the typed reason, or a default one)"),
    ("Approval dialog", "Ctrl+E", "focus the JSON input editor"),
    ("Question dialog", "Ctrl+Return", "submit the answers"),
    ("Question dialog", "Escape", "cancel (a deny)"),
    ("Question dialog", "1–4", "choose option N of the current question (marked ▶)"),
    ("Question dialog", "0", "pick “Other” of the current question and type your answer"),
    ("Question dialog", "Page Down / Page Up", "next / previous question"),
    ("Plan dialog", "Ctrl+Return", "approve the plan"),
    ("Plan dialog", "Escape", "keep planning (a deny)"),
)
"""(where, keys, what they do), in the order the list shows them."""

SHORTCUTS_NOTE = (
    "The Ctrl keys of a dialog work whatever has the focus, also in a text field. For "
    "the first 400 ms after a dialog appears its buttons and keys do nothing, so a key "
    "meant for another window cannot approve anything. Focus starts on the safe choice.")


class ShortcutsDialog(QDialog):
    """The keyboard shortcuts as a table: where, keys, what they do."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        layout = QVBoxLayout(self)
        table = QTableWidget(len(SHORTCUTS), 3, self)
        table.setObjectName("shortcutsTable")
        table.setHorizontalHeaderLabels(["Where", "Keys", "What they do"])
        table.verticalHeader().hide()
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        for row, cells in enumerate(SHORTCUTS):
            for column, text in enumerate(cells):
                table.setItem(row, column, QTableWidgetItem(text))
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        table.setAccessibleName("Keyboard shortcuts")
        table.setAccessibleDescription("Each row: where the keys work, the keys, and what "
                                       "they do")
        self.table = table
        layout.addWidget(table, 1)
        note = QLabel()
        note.setWordWrap(True)
        set_plain(note, SHORTCUTS_NOTE)
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Close).setAccessibleDescription(
            "Close the list of keyboard shortcuts")
        layout.addWidget(buttons)
        self.resize(640, 560)
        table.setFocus()


class AboutDialog(QDialog):
    """Version, SDK and CLI versions, the data folders, and a link that opens the log.

    `open_url` opens the log's link (the desktop's handler by default).
    """

    def __init__(self, info: AboutInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About Qoder Desktop")
        self.open_url: Callable[[QUrl], object] = QDesktopServices.openUrl
        self.info = info
        layout = QVBoxLayout(self)
        title = QLabel()
        title.setObjectName("aboutTitle")
        set_plain(title, f"Qoder Desktop {info.version}")
        layout.addWidget(title)
        rows = [*info.components, ("Qt", qVersion()), ("PySide6", pyside_version)]
        rows += [(what, str(path)) for what, path in info.folders]
        details = QTableWidget(len(rows), 2, self)
        details.setObjectName("aboutDetails")
        details.setHorizontalHeaderLabels(["", ""])
        details.horizontalHeader().hide()
        details.verticalHeader().hide()
        row_height = details.fontMetrics().height() + 10
        details.verticalHeader().setDefaultSectionSize(row_height)
        details.setMinimumHeight(len(rows) * row_height + 2 * details.frameWidth() + 2)
        details.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        details.setWordWrap(False)
        for row, (name, value) in enumerate(rows):
            details.setItem(row, 0, QTableWidgetItem(name))
            details.setItem(row, 1, QTableWidgetItem(value))
        header = details.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        details.setAccessibleName("Versions and folders")
        details.setAccessibleDescription("Qoder Desktop's components with their versions, "
                                         "and the folders it keeps its data in")
        self.details = details
        layout.addWidget(details, 1)
        self.log_url = QUrl.fromLocalFile(str(info.log_file))
        log_link = QLabel(f'<a href="{escape(self.log_url.toString())}">Open the log</a> '
                          f"({escape(str(info.log_file))})")
        log_link.setObjectName("logLink")
        log_link.setWordWrap(True)
        log_link.setOpenExternalLinks(False)
        log_link.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        log_link.linkActivated.connect(lambda _href: self.open_log())
        log_link.setAccessibleName("Open the log")
        log_link.setAccessibleDescription(f"Opens {info.log_file}")
        self.log_link = log_link
        layout.addWidget(log_link)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        close = buttons.button(QDialogButtonBox.StandardButton.Close)
        close.setAccessibleDescription("Close About")
        layout.addWidget(buttons)
        self.resize(640, self.sizeHint().height())
        close.setFocus()

    def open_log(self) -> None:
        """Open the log file with the desktop's viewer for it."""
        self.open_url(self.log_url)
