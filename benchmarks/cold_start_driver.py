"""Child process of the cold-start benchmark: `python -m qoder_desktop`, timed from inside.

Run as a script (``python benchmarks/cold_start_driver.py``). It notes the monotonic clock
when the interpreter reaches it, pauses garbage collection as ``main`` does before its
imports, times the import of the GUI entry point, patches
`MainWindow.showEvent` to start a `FirstFrame` probe (expose, first paint after it, the
next loop turn), then runs the real ``qoder_desktop.__main__.main([])``; the probe
prints the timestamps as one JSON line and ends the process at the first frame.
"""

import time

T_MAIN = time.clock_gettime(time.CLOCK_MONOTONIC)

import sys  # noqa: E402

sys.path.pop(0)  # this folder: its modules must not shadow anything the app imports
from benchmarks import gc_count  # noqa: E402 (stdlib only)

marks: dict[str, object] = {"main": T_MAIN}
gc_count.install(marks)  # (information: the collections until the frame)
t = time.clock_gettime(time.CLOCK_MONOTONIC)
from qoder_desktop.diagnostics.memory import pause_collection  # noqa: E402

# As `qoder_desktop.__main__.main` does first, before it imports the app: automatic
# collection stays off until the first frame (main's own call then finds it off, and
# `run_gui` turns it back on after the frame, as in a real start).
pause_collection()
from qoder_desktop.ui import lean_imports  # noqa: E402

# as the entry point does before it imports the app (timed with it)
getattr(lean_imports, "lean_imports_before_first_frame", lean_imports.apply_lean_imports)()
import qoder_desktop.ui.app  # noqa: E402, F401 (the import is what is timed)

marks["import_s"] = time.clock_gettime(time.CLOCK_MONOTONIC) - t

from PySide6.QtGui import QShowEvent  # noqa: E402

from benchmarks.first_paint import FirstFrame  # noqa: E402
from qoder_desktop.__main__ import main  # noqa: E402
from qoder_desktop.ui.windows.main_window import MainWindow  # noqa: E402

_original_show_event = MainWindow.showEvent
_probe = FirstFrame(marks)


def _show_event(self: MainWindow, event: QShowEvent) -> None:
    _probe.watch(self)
    _original_show_event(self, event)


MainWindow.showEvent = _show_event  # type: ignore[method-assign]
sys.exit(main([]))
