"""The decision history window on a 100,000-row ledger: open → first paint of the rows,
and filter → rows repainted, on a private Xvfb (xcb).

Path measured (open): `HistoryControl.open()` → window built and shown → the reader's
thread opens a read-only SQLite connection and reads the newest page (200 rows) → the
page comes back as a queued signal → model reset → the table's viewport paints those
rows (the next loop turn after that paint: the frame a person sees). Each sample closes
the window first, so each opening builds a new window, model, reader and connection.
Floor, interleaved: a bare `QWidget` of the same size holding a `QTableView` over a
`QStandardItemModel` already filled with 200 rows of the same columns, shown until its
viewport's first paint (what Qt alone needs to show those rows).

Path measured (filter): a filter control changes → `HistoryModel.set_filter` → the page
query on the reader's thread → model reset → the viewport's next paint. Filters cycled:
an outcome, a decider, a session, "today", a common text. Floor, interleaved: the same
page's SQLite query alone, on this thread (`HistoryQueries.page`). A rare text (a full
scan of the inputs, nothing to stop early on) and the totals are INFO rows; the loop's
longest stall during the whole run (5 ms heartbeat) shows the window never waits on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from benchmarks.common import Figure, emit, judge, log, now, parse_args, setup_env, summarize

OPEN_TARGET_MS = 300.0
FILTER_TARGET_MS = 100.0
ROWS = 100_000


class _Paints:
    """Waits for the next paint of a widget (and the loop turn after it)."""

    def __init__(self, widget: Any) -> None:
        from PySide6.QtCore import QEvent, QObject

        paints = self

        class Filter(QObject):
            def eventFilter(self, _watched: Any, event: Any) -> bool:
                if event.type() == QEvent.Type.Paint:
                    paints.mark()
                return False

        self._filter = Filter()
        self._armed: asyncio.Future[float] | None = None
        widget.installEventFilter(self._filter)

    def arm(self) -> asyncio.Future[float]:
        """A future holding the time of the next paint."""
        self._armed = asyncio.get_running_loop().create_future()
        return self._armed

    def mark(self) -> None:
        """Called on a paint event."""
        if self._armed is not None and not self._armed.done():
            self._armed.set_result(now())


async def _frame_after(future: asyncio.Future[float]) -> float:
    await asyncio.wait_for(future, 30)
    await asyncio.sleep(0)  # the backing store is flushed in this turn
    return now()


async def _open_once(control: Any) -> dict[str, float]:
    t0 = now()
    window = control.open()
    model = control.model
    arrived: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    paints = _Paints(window.table.viewport())
    painted: list[asyncio.Future[float]] = []

    def page_in() -> None:  # the paint to wait for is the one after this
        if not arrived.done():
            painted.append(paints.arm())
            arrived.set_result(now())

    model.first_page_shown.connect(page_in)
    model.failed.connect(lambda text: log(f"failed: {text}"))
    t_page = await asyncio.wait_for(arrived, 30)
    seen = await _frame_after(painted[0])
    return {"open": (seen - t0) * 1e3, "page": (t_page - t0) * 1e3}


async def _bare_once(size: Any, rows: list[tuple[str, ...]]) -> float:
    from PySide6.QtGui import QStandardItem, QStandardItemModel
    from PySide6.QtWidgets import QTableView, QVBoxLayout, QWidget

    t0 = now()
    widget = QWidget()
    widget.resize(size)
    model = QStandardItemModel(len(rows), len(rows[0]))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            model.setItem(r, c, QStandardItem(text))
    table = QTableView(widget)
    table.setModel(model)
    QVBoxLayout(widget).addWidget(table)
    paints = _Paints(table.viewport())
    future = paints.arm()
    widget.show()
    seen = await _frame_after(future)
    widget.close()
    widget.deleteLater()
    return (seen - t0) * 1e3


async def _filter_once(control: Any, change: Any, heartbeat: Any) -> tuple[float, float]:
    window, model = control.window, control.model
    arrived: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    paints = _Paints(window.table.viewport())
    painted: list[asyncio.Future[float]] = []

    def done() -> None:
        if not arrived.done():
            painted.append(paints.arm())
            arrived.set_result(now())

    model.first_page_shown.connect(done)
    t0 = now()
    change(window)
    await asyncio.wait_for(arrived, 30)
    seen = await _frame_after(painted[0])
    model.first_page_shown.disconnect(done)
    return (seen - t0) * 1e3, heartbeat.max_stall_ms(since=t0, until=seen)


def _filters(marker: str, session: str) -> list[tuple[str, Any]]:
    def combo(name: str, data: Any) -> Any:
        def change(window: Any) -> None:
            box = getattr(window, name)
            box.setCurrentIndex(box.findData(data))
        return change

    def text(value: str) -> Any:
        return lambda window: window.search.setText(value)

    return [("outcome denied", combo("outcome_combo", "deny")),
            ("any outcome", combo("outcome_combo", None)),
            ("decided by the CLI", combo("decider_combo", "cli")),
            ("anyone", combo("decider_combo", None)),
            ("one session", combo("session_combo", session)),
            ("all sessions", combo("session_combo", None)),
            ("today", combo("when_combo", "today")),
            ("any time", combo("when_combo", "any")),
            ("text 'npm test'", text("npm test")),
            ("no text", text(""))]


async def run(samples: int, root: Path) -> list[Figure]:
    """Measure the figures and their floors; returns the table rows."""
    from PySide6.QtCore import QSize

    from benchmarks.ledger_rows import MARKER, fill_ledger, session_id
    from benchmarks.qt_support import Heartbeat
    from qoder_desktop.store.history import HistoryQueries, connect_read_only
    from qoder_desktop.ui.control.history import HistoryControl
    from qoder_desktop.ui.windows.history_window import row_cells

    t = now()
    path = fill_ledger(root / "ledger.sqlite3", ROWS)
    log(f"ledger of {ROWS:,} requests written in {now() - t:.1f} s")
    queries = HistoryQueries(connect_read_only(path))
    page_rows = [row_cells(row) for row in queries.page(queries_filter())]
    heartbeat = Heartbeat()
    heartbeat.start()
    control = HistoryControl(path)
    opens: list[dict[str, float]] = []
    bare: list[float] = []
    for _ in range(samples):
        opens.append(await _open_once(control))
        size = control.window.size() if control.window is not None else QSize(1240, 700)
        control.close()
        await asyncio.sleep(0.02)
        bare.append(await _bare_once(size, page_rows))
        await asyncio.sleep(0.02)
    open_stall = heartbeat.max_stall_ms()
    control.open()
    await asyncio.sleep(0.2)
    filters = _filters(MARKER, session_id(3))
    filtered: list[float] = []
    stalls: list[float] = []
    direct: list[float] = []
    for _ in range(max(1, samples // 3)):
        for _name, change in filters:
            took, stall = await _filter_once(control, change, heartbeat)
            filtered.append(took)
            stalls.append(stall)
            flt = control.model.filter if control.model is not None else None
            t0 = now()
            queries.page(flt)
            direct.append((now() - t0) * 1e3)
    rare = [await _filter_once(control, lambda w: w.search.setText(MARKER), heartbeat),
            await _filter_once(control, lambda w: w.search.setText(""), heartbeat)]
    stalls.extend(stall for _took, stall in rare)
    t0 = now()
    queries.page(queries_filter(text=MARKER))
    rare_direct = (now() - t0) * 1e3
    totals_ms: dict[str, float] = {}
    for name, flt in (("all", queries_filter()), ("rare text", queries_filter(text=MARKER))):
        t0 = now()
        queries.totals(flt)
        totals_ms[name] = (now() - t0) * 1e3
    heartbeat.stop()
    control.close()
    open_stats, bare_stats = summarize([o["open"] for o in opens]), summarize(bare)
    page_stats = summarize([o["page"] for o in opens])
    filter_stats, direct_stats = summarize(filtered), summarize(direct)
    return [
        Figure("history: open → first paint of the rows (100k ledger, xcb)", "ms",
               open_stats, f"≤ {OPEN_TARGET_MS:g} ms",
               judge(open_stats["median"], OPEN_TARGET_MS),
               [f"first page in the model after med {page_stats['median']:.1f} ms; each "
                "sample builds a new window, model, reader thread and connection"],
               floor=bare_stats, floor_label="bare QTableView, 200 rows in memory"),
        Figure("history: filter → rows repainted (100k ledger, xcb)", "ms", filter_stats,
               f"p95 ≤ {FILTER_TARGET_MS:g} ms", judge(filter_stats["p95"], FILTER_TARGET_MS),
               ["filters cycled: " + ", ".join(name for name, _ in filters)],
               floor=direct_stats, floor_label="the same page's SQLite query alone",
               judged="p95"),
        Figure("history: filter on a rare text (a full scan, off the loop)", "ms",
               {"value": rare[0][0]}, "", "INFO",
               [f"its query alone {rare_direct:.0f} ms; totals: all rows "
                f"{totals_ms['all']:.0f} ms, rare text {totals_ms['rare text']:.0f} ms "
                "(both on the reader's thread, shown when ready)"],
               floor={"value": rare_direct}, floor_label="its query alone"),
        Figure("history: longest loop stall while filtering", "ms",
               {"value": max(stalls)}, "", "INFO",
               ["5 ms heartbeat from each filter change to its rows' frame, the rare "
                "text's full scan included (the floors' own queries run on the loop "
                "between samples and are not counted); over the openings (each builds "
                f"its window on the loop): {open_stall:.0f} ms"]),
    ]


def queries_filter(**fields: Any) -> Any:
    """A `HistoryFilter` (imported late: after the environment is set)."""
    from qoder_desktop.domain.history import HistoryFilter

    return HistoryFilter(**fields)


def main() -> None:
    """Entry point (python -m benchmarks.bench_history)."""
    args = parse_args()
    root = setup_env()
    samples = 5 if args.quick else 15
    with contextlib.ExitStack() as stack:
        from benchmarks.xvfb import private_display, use_xcb

        use_xcb(stack.enter_context(private_display("1366x768x24")))
        from benchmarks.qt_support import hard_exit, run_qasync

        rows = run_qasync(lambda: run(samples, root))
        emit(rows, args.out)
        assert os.environ["QT_QPA_PLATFORM"] == "xcb"
    hard_exit(0)


if __name__ == "__main__":
    main()
