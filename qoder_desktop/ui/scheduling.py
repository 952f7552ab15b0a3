"""When work runs on the GUI loop: a step per loop turn, and after a widget's first paint.

The app keeps its loop turns short, so a window takes input while work goes on:

- `in_next_turn` runs one call in the next loop turn; `next_turn` is the same hand-back
  for a coroutine (``await next_turn()``).
- `TurnSteps` runs a generator one step per loop turn: each ``yield`` hands the loop back.
- `FirstPaint` runs what it is given once, in the loop turn after a first paint (so the
  work does not share the frame it follows); `after_first_paint` watches a widget for it.
- `run_until_first_frame` runs Qt's own event loop (no asyncio) until a window's first
  frame is on screen: the app paints its main window before asyncio and qasync load.

Qt's zero timers and qasync's ``call_soon`` both end the current turn: what was queued
before (window-system events, among them a paint) is handled first.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer
from PySide6.QtWidgets import QWidget


def in_next_turn(call: Callable[[], object], receiver: QObject | None = None) -> None:
    """Run `call` in the next loop turn (dropped if `receiver` is deleted before then)."""
    if receiver is None:
        QTimer.singleShot(0, call)
    else:
        QTimer.singleShot(0, receiver, call)


async def next_turn() -> None:
    """Hand the loop back for one turn (a coroutine's step boundary)."""
    import asyncio  # (this module is imported before the first frame; asyncio after it)

    await asyncio.sleep(0)


class TurnSteps(QObject):
    """Runs a generator one step per loop turn: each `yield` hands the loop back.

    `run` replaces a generator still running; `cancel` drops it.

    Signals:
        (none)
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.step)
        self._steps: Iterator[None] | None = None

    def run(self, steps: Iterator[None], *, now: bool = False) -> None:
        """Start `steps`: its first step now (`now`) or in the next loop turn."""
        self.cancel()
        self._steps = steps
        if now:
            self.step()
        else:
            self._timer.start()

    def cancel(self) -> None:
        """Drop the running generator (what it did so far stays done)."""
        self._timer.stop()
        self._steps = None

    def is_running(self) -> bool:
        """True while a generator has steps left."""
        return self._steps is not None

    def step(self) -> None:
        """Run one step now (the loop calls this; tests may to finish early)."""
        steps = self._steps
        if steps is None:
            return
        try:
            next(steps)
        except StopIteration:
            if self._steps is steps:
                self._steps = None
            return
        if self._steps is steps:  # (a step may have started another generator)
            self._timer.start()


class FirstPaint(QObject):
    """Runs the calls handed to `when_painted` once, in the loop turn after `painted()`.

    The owner says when its first paint happened (`painted`, from its paint event or an
    event filter) or that none will come (`run_now`: closed unpainted, a fallback). A
    call handed over after they ran runs in the next loop turn. A call that raises goes
    to `sys.excepthook` (in the app, the error reporter), as an error in a slot would;
    the others still run.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._waiting: list[Callable[[], object]] | None = []
        self._seen = False

    def when_painted(self, then: Callable[[], object]) -> None:
        """Call `then` once, in the loop turn after the first paint (or `run_now`)."""
        if self._waiting is None:
            in_next_turn(then)
        else:
            self._waiting.append(then)

    def painted(self) -> None:
        """The first paint happened: the waiting calls run in the next loop turn."""
        if not self._seen:
            self._seen = True
            in_next_turn(self.run_now, self)

    def has_run(self) -> bool:
        """True once the waiting calls have run."""
        return self._waiting is None

    def run_now(self) -> None:
        """Run the waiting calls now (once; later calls to this do nothing)."""
        waiting, self._waiting = self._waiting, None
        for then in waiting or ():
            try:
                then()
            except Exception:
                sys.excepthook(*sys.exc_info())


class _PaintWatch(FirstPaint):
    """A `FirstPaint` fed by an event filter on a widget, with a fallback timer."""

    def __init__(self, widget: QWidget, fallback_ms: int) -> None:
        super().__init__(widget)
        self._widget = widget
        widget.installEventFilter(self)
        # A window that is never painted (started hidden, minimised) still runs the calls.
        QTimer.singleShot(fallback_ms, self, self.run_now)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Note the first paint; the calls run after it is on screen."""
        if watched is self._widget and event.type() == QEvent.Type.Paint:
            self.painted()
        return False

    def run_now(self) -> None:
        """Stop watching, then run the waiting calls (once)."""
        if not self.has_run():
            self._widget.removeEventFilter(self)
        super().run_now()


def after_first_paint(widget: QWidget, then: Callable[[], object], *,
                      fallback_ms: int = 1000) -> FirstPaint:
    """Run `then` once, in the loop turn after `widget`'s first paint (or after
    `fallback_ms` if it never paints)."""
    watch = _PaintWatch(widget, fallback_ms)
    watch.when_painted(then)
    return watch


def run_until_first_frame(window: QWidget, *, fallback_ms: int = 1000) -> None:
    """Run Qt's own event loop until `window` has painted and the loop has turned once
    more (the frame is flushed to the display; a probe watching for it reports then),
    or until `fallback_ms` have passed without a paint (started hidden or minimised).

    For the app's start only, before the app's asyncio loop exists and runs.
    """
    frame = QEventLoop()
    after_first_paint(window, lambda: in_next_turn(frame.quit), fallback_ms=fallback_ms)
    frame.exec()
