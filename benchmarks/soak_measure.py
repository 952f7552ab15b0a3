"""The soak's checkpoints: what the app holds after a round, and the timers it reads.

A checkpoint is taken with nothing pending and every session of the round stopped: RSS
(before and after the app's idle trim, which the checkpoint runs instead of waiting the
30 s after which the app runs it itself),
the QObjects reachable from the application and its top-level widgets, asyncio tasks (by
coroutine), threads, file descriptors, objects frozen out of garbage collection, the
sessions and transcript lines the hub keeps, and the disk's own commit time.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import os
import threading
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import now, rss_mb, summarize


@dataclass
class Checkpoint:
    """What the app holds after a round, with nothing pending."""

    round: int
    requests: int
    rss_mb: float
    qobjects: int
    widgets: int
    tasks: int
    threads: int
    fds: int
    frozen: int
    sessions: int
    task_kinds: dict[str, int] = field(default_factory=dict)
    transcript_lines: int = 0
    disk_p95_ms: float = 0.0
    rss_trimmed_mb: float = 0.0
    """RSS after the app's idle trim (`IdleTrim`: freed heap pages given back, as the app
    does itself once nothing has waited for 30 s); `rss_mb` is before it."""
    seconds: float = 0.0
    """Since the soak started."""

    def line(self) -> str:
        """One log line."""
        return (f"round {self.round} ({self.seconds:.0f} s): {self.requests} requests, "
                f"RSS {self.rss_mb:.1f} MB ({self.rss_trimmed_mb:.1f} MB after the idle trim), "
                f"{self.qobjects} QObjects ({self.widgets} widgets), {self.tasks} tasks, "
                f"{self.threads} threads, {self.fds} fds, {self.frozen} frozen, "
                f"{self.sessions} sessions ({self.transcript_lines} transcript lines); disk "
                f"floor p95 {self.disk_p95_ms:.2f} ms; tasks: {self.task_kinds}")


def samples() -> array[float]:
    """A growing series of times (ms): 8 bytes a value, where a list of floats takes 32.
    The harness runs in the process it measures, so its own records count in the RSS."""
    return array("d")


def take(series: array[float]) -> array[float]:
    """The values recorded so far, removed from `series` (values appended meanwhile, by
    another thread, stay for the next round)."""
    count = len(series)
    taken = series[:count]
    del series[:count]
    return taken


@dataclass
class RoundTimes:
    """Per-round samples: dialog open (ms) and ledger writes (ms)."""

    dialog_open: array[float] = field(default_factory=samples)
    ledger_write: array[float] = field(default_factory=samples)
    decision_wait: array[float] = field(default_factory=samples)


def live_qobjects() -> tuple[int, int]:
    """(QObjects reachable from the application and its top-level widgets, all widgets)."""
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QApplication
    from shiboken6 import Shiboken

    app = QApplication.instance()
    seen: set[int] = set()
    roots: list[Any] = [app, *QApplication.topLevelWidgets()]
    for root in roots:
        seen.add(Shiboken.getCppPointer(root)[0])
        for child in root.findChildren(QObject):
            seen.add(Shiboken.getCppPointer(child)[0])
    return len(seen), len(QApplication.allWidgets())


class LedgerTimer:
    """Times the ledger's writes on the writer thread (harness-side wrappers)."""

    def __init__(self, ledger: Any) -> None:
        self.samples = samples()
        self.waits = samples()
        for name in ("record_request", "record_decision"):
            self._wrap(ledger, name)
        original = ledger.write_decision

        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = now()
            try:
                return await original(*args, **kwargs)
            finally:
                self.waits.append((now() - start) * 1e3)

        ledger.write_decision = timed

    def _wrap(self, ledger: Any, name: str) -> None:
        function = getattr(ledger, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = now()
            try:
                return function(*args, **kwargs)
            finally:
                self.samples.append((now() - start) * 1e3)  # array.append: one step under the GIL

        setattr(ledger, name, timed)


async def checkpoint(desktop: Any, number: int, requests: int, own: set[Any]) -> Checkpoint:
    """Let deferred deletes and batched views run, write what is queued, collect, count."""
    for _ in range(4):
        await asyncio.sleep(0.05)
    await asyncio.to_thread(desktop.db.writer.flush)
    await asyncio.sleep(0.05)
    gc.collect()
    qobjects, widgets = live_qobjects()
    tasks = [t for t in asyncio.all_tasks() if t not in own and not t.done()]
    kinds = collections.Counter(getattr(t.get_coro(), "__qualname__", "?") for t in tasks)
    sessions = desktop.hub.sessions()
    lines = desktop.hub.transcript_lines_kept()
    fds = len(os.listdir("/proc/self/fd"))
    disk = await asyncio.to_thread(disk_floor, Path(desktop.db.path).parent)
    untrimmed = rss_mb()
    desktop.app.idle_trim.trim_now()  # what the app does after 30 s with nothing waiting
    return Checkpoint(number, requests, untrimmed, qobjects, widgets, len(tasks),
                      threading.active_count(), fds, gc.get_freeze_count(), len(sessions),
                      dict(kinds), lines, disk, rss_trimmed_mb=rss_mb())


def disk_floor(folder: Path, samples: int = 40) -> float:
    """p95 (ms) of a bare SQLite insert + commit with the store's pragmas (WAL, synchronous
    FULL) in a scratch file beside the ledger: what the disk costs now, for reading the
    ledger figure on a shared machine."""
    import sqlite3

    path = folder / "soak-disk-floor.sqlite3"
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)")
        times = []
        for i in range(samples):
            start = now()
            conn.execute("INSERT INTO t (v) VALUES (?)", (f"row {i}" * 20,))
            conn.commit()
            times.append((now() - start) * 1e3)
    finally:
        conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return float(summarize(times)["p95"])
