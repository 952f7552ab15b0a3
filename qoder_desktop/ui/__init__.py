"""Qt views: windows, dialogs, the tray and the bridge between broker events and Qt signals.

Nothing below this package is imported by the Qt-free core. Importing it first, before
the views and everything they load: library parts the app never uses are skipped
(`diagnostics.memory.skip_unused_modules`), the Qt-free modules the window needs are
imported before PySide6, and PySide6's per-import source check is made cheap
(`pyside_scan.prepare_imports`).
"""

from qoder_desktop.diagnostics.memory import skip_unused_modules
from qoder_desktop.ui.pyside_scan import prepare_imports

skip_unused_modules()
prepare_imports()
