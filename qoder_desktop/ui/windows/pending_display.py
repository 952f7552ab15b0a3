"""Where the main window shows how many requests wait: the queue's header, and without a
system tray (no tray icon to carry the count) the window title and a status-bar badge."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow

from qoder_desktop.ui.forms.ui_main_window import Ui_MainWindow

APP_TITLE = "Qoder Desktop"


class PendingDisplay:
    """Shows the pending count in `window` (its queue header, title and badge)."""

    def __init__(self, window: QMainWindow, ui: Ui_MainWindow) -> None:
        self._window = window
        self._ui = ui
        self.tray_available = True
        """With a tray, its icon carries the count; without, the title and the badge do."""
        self._badge = QLabel(window)
        self._badge.setObjectName("pendingBadge")
        self._badge.hide()
        ui.statusBar.addPermanentWidget(self._badge)

    def show_count(self, count: int) -> None:
        """Show `count` waiting requests (and enable "open the oldest" when there is one)."""
        ui = self._ui
        ui.queueHeader.setText(f"Waiting for you ({count})" if count else "Waiting for you")
        show = count > 0 and not self.tray_available
        self._window.setWindowTitle(f"{APP_TITLE} ({count} pending)" if show else APP_TITLE)
        self._badge.setText(f"{count} pending")
        self._badge.setToolTip(f"{count} requests wait for your answer")
        self._badge.setVisible(show)
        ui.openNextAction.setEnabled(count > 0)
