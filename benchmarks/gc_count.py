"""Counts Python's automatic garbage collections in a cold-start driver (information only).

Stdlib only, so a driver can install it first thing without changing what it imports
before PySide6 (`benchmarks.first_paint` imports PySide6). `install(marks)` puts a live
dict in the driver's marks; the `FirstFrame` probe prints it with the rest at the frame:
how many collections ran until then and the GUI-thread CPU they took.
"""

from __future__ import annotations

import gc
import time


def install(marks: dict[str, object]) -> None:
    """Count every automatic collection from now on into ``marks["gc"]``."""
    counts: dict[str, float] = {"collections": 0, "cpu_s": 0.0}
    started = [0.0]

    def count(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            counts["collections"] += 1
            counts["cpu_s"] += time.thread_time() - started[0]

    gc.callbacks.append(count)
    marks["gc"] = counts
