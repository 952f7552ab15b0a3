"""Help › Keyboard shortcuts and Help › About: one open copy of each, non-blocking.

The dialogs (`help_dialogs`) load when first opened: the main window, which makes its
`HelpMenu` before its first frame, needs only the menu's actions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from qoder_desktop.diagnostics.about import AboutInfo
    from qoder_desktop.ui.windows.help_dialogs import AboutDialog, ShortcutsDialog


class HelpMenu:
    """Opens the Keyboard shortcuts list and About over `parent` (one of each at a time).

    Attributes:
        about_source: collects what About shows; None shows only the version.
    """

    def __init__(self, parent: QWidget, shortcuts: QAction, about: QAction) -> None:
        self._parent = parent
        self.about_source: Callable[[], AboutInfo] | None = None
        self.shortcuts_dialog: ShortcutsDialog | None = None
        self.about_dialog: AboutDialog | None = None
        shortcuts.triggered.connect(self.open_shortcuts)
        about.triggered.connect(self.open_about)

    def open_shortcuts(self) -> ShortcutsDialog:
        """Show the keyboard shortcuts (non-modal) and return the dialog."""
        from qoder_desktop.ui.windows.help_dialogs import ShortcutsDialog

        if self.shortcuts_dialog is None:
            self.shortcuts_dialog = ShortcutsDialog(self._parent)
        self.shortcuts_dialog.show()
        self.shortcuts_dialog.raise_()
        self.shortcuts_dialog.activateWindow()
        return self.shortcuts_dialog

    def open_about(self) -> AboutDialog:
        """Show About (non-modal; built anew each time, the facts may change)."""
        from qoder_desktop.diagnostics.about import AboutInfo
        from qoder_desktop.ui.windows.help_dialogs import AboutDialog

        if self.about_dialog is not None:
            self.about_dialog.close()
            self.about_dialog.deleteLater()
        info = (self.about_source() if self.about_source is not None
                else AboutInfo(_own_version(), (), (), _no_log()))
        self.about_dialog = AboutDialog(info, self._parent)
        self.about_dialog.show()
        self.about_dialog.raise_()
        self.about_dialog.activateWindow()
        return self.about_dialog


def _own_version() -> str:
    from qoder_desktop import __version__

    return __version__


def _no_log() -> Path:
    from qoder_desktop.config.paths import AppPaths

    return AppPaths.default().log_file
