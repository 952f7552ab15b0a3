"""Child process of the cold-start benchmark: `python -m qoder_desktop`, timed from inside.

Run as a script (``python benchmarks/cold_start_driver.py``). It notes the monotonic clock
when the interpreter reaches it, times the import of the GUI entry point, patches
`MainWindow.showEvent` (and the window's first paint) to print timestamps as one JSON
line, then runs the real ``qoder_desktop.__main__.main([])`` and exits at the first paint.
"""

import time

T_MAIN = time.clock_gettime(time.CLOCK_MONOTONIC)

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

sys.path.pop(0)  # this folder: its modules must not shadow anything the app imports

marks: dict[str, float] = {"main": T_MAIN}
t = time.clock_gettime(time.CLOCK_MONOTONIC)
import qoder_desktop.ui.app  # noqa: E402, F401 (the import is what is timed)

marks["import_s"] = time.clock_gettime(time.CLOCK_MONOTONIC) - t

from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtGui import QShowEvent  # noqa: E402

from qoder_desktop.__main__ import main  # noqa: E402
from qoder_desktop.ui.windows.main_window import MainWindow  # noqa: E402

_original_show_event = MainWindow.showEvent


class _FirstPaint(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and "painted" not in marks:
            marks["painted"] = time.clock_gettime(time.CLOCK_MONOTONIC)
            print(json.dumps(marks), flush=True)
            sys.stderr.flush()
            os._exit(0)
        return False


_filter = _FirstPaint()


def _show_event(self: MainWindow, event: QShowEvent) -> None:
    if "shown" not in marks:
        marks["shown"] = time.clock_gettime(time.CLOCK_MONOTONIC)
        self.installEventFilter(_filter)
    _original_show_event(self, event)


MainWindow.showEvent = _show_event  # type: ignore[method-assign]
sys.exit(main([]))
