"""Driving the app's qasync loop (`AppEventLoop`) from a synchronous test."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from qoder_desktop.ui.event_loop import AppEventLoop

T = TypeVar("T")


def run(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, T],
        timeout: float = 10) -> T:
    """Run `coroutine` on `loop` to its end; a hang fails after `timeout` seconds."""
    return loop.run_until_complete(asyncio.wait_for(coroutine, timeout))


def app_loop(qapp: QApplication) -> Iterator[AppEventLoop]:
    """The app's loop on the test's QApplication, for a fixture to yield from; as in
    the app, closing the last window quits nothing."""
    from qoder_desktop.ui.event_loop import AppEventLoop

    qapp.setQuitOnLastWindowClosed(False)
    event_loop = AppEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    try:
        yield event_loop
    finally:
        event_loop.close()
        asyncio.set_event_loop(None)


async def settle(condition: Callable[[], object], timeout: float = 5.0) -> None:
    """Let Qt and asyncio run until `condition()` holds; fail after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.005)


class LoopTicks:
    """Counts loop turns by a 5 ms ticker while it is entered: proof that the loop kept
    serving other work meanwhile (`async with LoopTicks() as ticks: …; ticks.count`)."""

    def __init__(self) -> None:
        self.count = 0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(0.005)

    async def __aenter__(self) -> LoopTicks:
        self._task = asyncio.ensure_future(self._tick())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._task is not None:
            self._task.cancel()


async def qt_turns(count: int = 4) -> None:
    """Let Qt's zero-interval timers run `count` times in a row: a zero timer started
    before this call (a throttle that holds work back for a few loop turns, see
    `ui.bridge.TurnThrottle`) has fired by the end, so what it would do has been done.

    A wait on an event, not on the clock: each turn is one 0 ms single-shot timer,
    started when the one before it fired (Qt fires due timers in the order they were
    started).
    """
    from PySide6.QtCore import QTimer

    loop = asyncio.get_running_loop()
    for _ in range(count):
        fired: asyncio.Future[None] = loop.create_future()
        QTimer.singleShot(0, lambda fired=fired: fired.done() or fired.set_result(None))
        await fired


def wait_qt_turns(qtbot: Any, count: int = 4) -> None:
    """`qt_turns` for a synchronous test: `count` chained 0 ms Qt timers have fired."""
    from PySide6.QtCore import QTimer

    fired: list[int] = []

    def turn() -> None:
        fired.append(1)
        if len(fired) < count:
            QTimer.singleShot(0, turn)

    QTimer.singleShot(0, turn)
    qtbot.waitUntil(lambda: len(fired) >= count, timeout=5000)
