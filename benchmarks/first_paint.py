"""First-paint probe for the cold-start drivers (the app and the bare window).

`FirstFrame` watches one top-level widget: the expose of its native window, the first
paint event the widget gets after that expose, and the next event-loop turn after that
paint (the backing store has then been flushed to the display: the frame a person
sees). It then prints the driver's timestamps as one JSON line, with the CPU time the
process and its GUI thread used until then (what load does not add to), the process's RSS,
the number of modules loaded (and whether pydantic is among them) and the window's size,
and ends the process at once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer


def clock() -> float:
    """The clock the parent uses too (CLOCK_MONOTONIC, seconds)."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def rss_mb() -> float:
    """This process's VmRSS in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


class FirstFrame(QObject):
    """Marks expose → first paint → next loop turn of one widget, then reports and exits."""

    def __init__(self, marks: dict[str, Any]) -> None:
        super().__init__()
        self.marks = marks
        self.widget: Any = None

    def watch(self, widget: Any) -> None:
        """Start watching `widget` (call when its native window exists, e.g. at show)."""
        if self.widget is not None:
            return
        self.widget = widget
        self.marks["shown"] = clock()
        widget.installEventFilter(self)
        handle = widget.windowHandle()
        if handle is not None:
            handle.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Note the expose of the window and the first paint of the widget after it."""
        kind = event.type()
        if kind == QEvent.Type.Expose and watched is not self.widget:
            if "exposed" not in self.marks and watched.isExposed():  # type: ignore[attr-defined]
                self.marks["exposed"] = clock()
        elif kind == QEvent.Type.Paint and watched is self.widget:
            if "exposed" not in self.marks:
                self.marks.setdefault("paint_before_expose", clock())
            elif "painted" not in self.marks:
                self.marks["painted"] = clock()
                QTimer.singleShot(0, self.report)
        return False

    def report(self) -> None:
        """Print the marks as one JSON line and end the process."""
        self.marks["frame"] = clock()
        times = os.times()
        self.marks["cpu_s"] = times.user + times.system  # the process's, all threads
        self.marks["gui_cpu_s"] = time.thread_time()  # this (the GUI) thread's alone
        self.marks["rss_mb"] = rss_mb()
        self.marks["modules"] = len(sys.modules)
        self.marks["pydantic"] = "pydantic" in sys.modules
        size = self.widget.size()
        self.marks["width"], self.marks["height"] = size.width(), size.height()
        print(json.dumps(self.marks), flush=True)
        sys.stderr.flush()
        os._exit(0)
