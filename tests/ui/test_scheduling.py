"""The GUI loop's scheduler: steps run one per loop turn and in order, and work after a
first paint runs in the turn after that paint, never inside it (on the app's qasync loop)."""

from __future__ import annotations

import ast
import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.loop import run, settle
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

import qoder_desktop
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.scheduling import (
    FirstPaint,
    TurnSteps,
    after_first_paint,
    in_next_turn,
    next_turn,
)


def _steps(name: str, count: int, log: list[str]) -> Iterator[None]:
    for number in range(count):
        if number:
            yield
        log.append(f"{name}{number}")


def test_two_step_runs_take_turns_one_step_each(qtbot: QtBot, loop: AppEventLoop) -> None:
    log: list[str] = []
    first, second = TurnSteps(), TurnSteps()
    first.run(_steps("a", 3, log))
    second.run(_steps("b", 3, log))
    run(loop, settle(lambda: not first.is_running() and not second.is_running()))
    assert log == ["a0", "b0", "a1", "b1", "a2", "b2"]


def test_work_queued_by_a_step_runs_before_the_next_step(qtbot: QtBot,
                                                         loop: AppEventLoop) -> None:
    log: list[str] = []
    steps = TurnSteps()

    def with_other_work() -> Iterator[None]:
        log.append("step 1")
        in_next_turn(lambda: log.append("other work"))
        yield
        log.append("step 2")

    steps.run(with_other_work(), now=True)
    assert log == ["step 1"]  # `now`: the first step ran in the caller's turn
    run(loop, settle(lambda: not steps.is_running()))
    assert log == ["step 1", "other work", "step 2"]


def test_a_new_run_replaces_the_one_still_going(qtbot: QtBot, loop: AppEventLoop) -> None:
    log: list[str] = []
    steps = TurnSteps()
    steps.run(_steps("old", 3, log), now=True)
    steps.run(_steps("new", 2, log))
    run(loop, settle(lambda: not steps.is_running()))
    assert log == ["old0", "new0", "new1"]


def test_coroutines_hand_the_loop_back_one_turn_each(loop: AppEventLoop) -> None:
    log: list[str] = []

    async def stepper(name: str) -> None:
        for number in range(3):
            log.append(f"{name}{number}")
            await next_turn()

    async def both() -> None:
        await asyncio.gather(stepper("a"), stepper("b"))

    run(loop, both())
    assert log == ["a0", "b0", "a1", "b1", "a2", "b2"]


class _Painted(QWidget):
    """Notes its paint events, and whether a call came while it was painting."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log
        self.painting = False

    def paintEvent(self, event: QPaintEvent) -> None:
        self.painting = True
        try:
            super().paintEvent(event)
            self.log.append("paint")
        finally:
            self.painting = False

    def note(self, what: str) -> None:
        self.log.append(f"{what} inside the paint" if self.painting else what)


def test_after_first_paint_runs_once_in_the_turn_after_the_paint(
        qtbot: QtBot, loop: AppEventLoop) -> None:
    log: list[str] = []
    widget = _Painted(log)
    qtbot.addWidget(widget)
    after_first_paint(widget, lambda: widget.note("after"), fallback_ms=60_000)
    widget.show()
    run(loop, settle(lambda: "after" in log))
    widget.update()
    run(loop, settle(lambda: log.count("paint") >= 2))
    assert log[0] == "paint"
    assert log.count("after") == 1 and not any("inside" in entry for entry in log)


def test_a_widget_that_never_paints_still_runs_the_call(qtbot: QtBot,
                                                        loop: AppEventLoop) -> None:
    hidden = QWidget()
    qtbot.addWidget(hidden)
    log: list[str] = []
    after_first_paint(hidden, lambda: log.append("ran"), fallback_ms=50)
    run(loop, settle(lambda: log == ["ran"]))


def test_calls_handed_over_after_the_paint_run_in_the_next_turn(
        qtbot: QtBot, loop: AppEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    errors: list[type[BaseException] | None] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, *_rest: errors.append(kind))
    log: list[str] = []
    paint = FirstPaint()

    def fails() -> None:
        raise RuntimeError("one call fails")

    paint.when_painted(fails)
    paint.when_painted(lambda: log.append("first"))
    paint.painted()
    paint.painted()  # a second paint changes nothing
    assert log == [] and not paint.has_run()
    run(loop, settle(paint.has_run))
    assert log == ["first"] and errors == [RuntimeError]  # reported; the others still ran
    paint.when_painted(lambda: log.append("late"))
    assert log == ["first"]
    run(loop, settle(lambda: "late" in log))
    assert log == ["first", "late"]


OWN_TURN_TIMERS = {
    "ui/scheduling.py": "the scheduler itself",
    "ui/bridge.py": "TurnThrottle: the one batching of the pending list, counted in turns",
    "ui/widgets/json_editor.py": "a check after text changes, restarted by each edit",
    "ui/dialogs/input_origin.py": "forgets an input event's stamp once its delivery ends",
}
"""Modules that make a zero-interval timer of their own, and why it is not a step or
work after a paint."""


def _turn_timers(path: Path) -> list[int]:
    """Lines of `singleShot(0, …)`, `setInterval(0)` and `asyncio.sleep(0)` in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("singleShot", "setInterval", "sleep") and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0):
            found.append(node.lineno)
    return found


def test_steps_and_work_after_a_paint_go_through_the_scheduler() -> None:
    """"One step per loop turn" and "after the first paint" are built once, here: the
    dialogs' spares and the staged dialogs' paint wait use it, as start-up does."""
    package = Path(qoder_desktop.__file__).parent
    own = {str(path.relative_to(package)): lines
           for path in sorted((package / "ui").rglob("*.py"))
           if (lines := _turn_timers(path))}
    assert set(own) <= set(OWN_TURN_TIMERS), own
