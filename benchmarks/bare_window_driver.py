"""The floor of the cold start: a bare PySide6 window of the app's size, timed the same way.

Run as a script: ``python benchmarks/bare_window_driver.py WIDTH HEIGHT``. Interpreter
start, ``import PySide6.QtWidgets``, a `QApplication`, an empty `QMainWindow` of that
size shown; the `FirstFrame` probe reports as for the app (same JSON line).
"""

import time

T_MAIN = time.clock_gettime(time.CLOCK_MONOTONIC)

import sys  # noqa: E402

sys.path.pop(0)
from benchmarks import gc_count  # noqa: E402 (stdlib only)

marks: dict[str, object] = {"main": T_MAIN}
gc_count.install(marks)  # (information: the collections until the frame)
t = time.clock_gettime(time.CLOCK_MONOTONIC)
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402

marks["import_s"] = time.clock_gettime(time.CLOCK_MONOTONIC) - t

from benchmarks.first_paint import FirstFrame  # noqa: E402

app = QApplication([sys.argv[0]])
window = QMainWindow()
window.setWindowTitle("bare window")
window.resize(int(sys.argv[1]), int(sys.argv[2]))
window.winId()  # the native window, so the probe can watch its expose
probe = FirstFrame(marks)
probe.watch(window)
window.show()
sys.exit(app.exec())
