"""Qt probes for ``qoder-desktop --self-check``: is there a system tray?

The self-check is Qt-free core code; the entry point hands it `describe_tray`, which
the self-check runs through `qoder_desktop.diagnostics.isolated.run_isolated` (in a forked
child on Linux, because Qt aborts the process when it cannot open the display).
PySide6 is imported only inside `describe_tray`, so importing this module never loads Qt.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from qoder_desktop.diagnostics.isolated import has_display


def describe_tray(environ: Mapping[str, str] | None = None) -> tuple[bool | None, str]:
    """Whether the desktop has a system tray, and which Qt answered.

    Uses the running `QApplication` when there is one; otherwise it creates one (and
    leaves it alive: the caller is a short-lived check). Qt may abort the process when
    the display cannot be opened, so run this in a throw-away process when in doubt.

    Args:
        environ: the environment that decides whether there is a display.

    Returns:
        ``(available, detail)``: ``available`` is None when there is no display (nothing
        was checked); ``detail`` names the Qt version and platform plugin, e.g.
        ``"Qt 6.12.0, platform xcb"``.
    """
    if not has_display(environ):
        return None, "no display"
    from PySide6 import QtCore
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication, QSystemTrayIcon

    app = QtCore.QCoreApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv and sys.argv[0] else "qoder-desktop"])
        describe_tray.app = app  # type: ignore[attr-defined]  # keep it alive
    available = bool(QSystemTrayIcon.isSystemTrayAvailable())
    platform_name = QGuiApplication.platformName() if isinstance(app, QGuiApplication) else "?"
    return available, f"Qt {QtCore.qVersion()}, platform {platform_name}"
