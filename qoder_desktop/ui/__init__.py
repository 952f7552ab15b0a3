"""Qt views: windows, dialogs, the tray and the bridge between broker events and Qt signals.

Nothing below this package is imported by the Qt-free core. Importing it first makes
PySide6's per-import source check cheap (`pyside_scan.read_sources_once`), before the
views and everything they load are imported.
"""

from qoder_desktop.ui.pyside_scan import read_sources_once

read_sources_once()
