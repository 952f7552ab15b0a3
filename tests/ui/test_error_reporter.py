"""Unexpected errors reach the person in a few plain-text boxes, never a flood."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.error_reporter import MAX_OPEN_BOXES, REOPEN_QUIET, TITLE, ErrorReporter

pytestmark = pytest.mark.asyncio


@pytest.fixture
def reporter(qtbot: QtBot, tmp_path: Path) -> Iterator[ErrorReporter]:
    """A reporter whose log is in `tmp_path`; its open boxes are closed after the test."""
    reporter = ErrorReporter(tmp_path / "qoder-desktop.log")
    yield reporter
    for box in visible():
        box.done(0)


def visible() -> list[QMessageBox]:
    """The error boxes the person can see (top-level windows titled as the reporter's)."""
    return [widget for widget in QApplication.topLevelWidgets()
            if isinstance(widget, QMessageBox) and widget.windowTitle() == TITLE
            and widget.isVisible()]


def box_with(text: str) -> QMessageBox:
    """The one visible error box whose text holds `text`."""
    [box] = [box for box in visible() if text in box.text()]
    return box


async def test_an_error_in_a_loop_callback_opens_one_box_and_the_loop_goes_on(
        reporter: ErrorReporter, qtbot: QtBot) -> None:
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(reporter.loop_exception)
    try:
        def fail() -> None:
            raise RuntimeError("the tray <b>broke</b>")

        loop.call_soon(fail)
        went_on = asyncio.Event()
        loop.call_soon(went_on.set)  # runs after the failing callback: the loop goes on
        await asyncio.wait_for(went_on.wait(), 5)
    finally:
        loop.set_exception_handler(previous)
    qtbot.waitUntil(lambda: len(visible()) == 1)
    [box] = visible()
    assert "RuntimeError: the tray <b>broke</b>" in box.text()
    assert box.textFormat().name == "PlainText"


async def test_the_same_error_over_and_over_is_counted_in_its_box(
        reporter: ErrorReporter, qtbot: QtBot) -> None:
    for _ in range(500):
        reporter.show("ValueError: bad row", "traceback")
    qtbot.waitUntil(lambda: len(visible()) == 1)
    assert "This happened 500 times." in visible()[0].text()


async def test_many_different_errors_open_a_few_boxes_and_count_the_rest(
        reporter: ErrorReporter, qtbot: QtBot, tmp_path: Path) -> None:
    for number in range(40):
        reporter.show(f"KeyError: {number}")
    qtbot.waitUntil(lambda: len(visible()) == MAX_OPEN_BOXES)
    newest = box_with(f"KeyError: {MAX_OPEN_BOXES - 1}")
    assert f"{40 - MAX_OPEN_BOXES} more unexpected errors were not shown here" in newest.text()
    assert str(tmp_path / "qoder-desktop.log") in newest.text()


async def test_a_closed_box_makes_room_for_the_next_error(
        reporter: ErrorReporter, qtbot: QtBot) -> None:
    for number in range(MAX_OPEN_BOXES):
        reporter.show(f"OSError: {number}")
    box_with("OSError: 0").done(0)
    qtbot.waitUntil(lambda: len(visible()) == MAX_OPEN_BOXES - 1)
    reporter.show("OSError: the next one")
    qtbot.waitUntil(lambda: any("the next one" in box.text() for box in visible()))
    reporter.show("OSError: 1")  # still open: counted there, no new box
    assert len(visible()) == MAX_OPEN_BOXES
    assert "This happened 2 times." in box_with("OSError: 1").text()


async def test_an_answer_for_a_cli_that_already_exited_is_logged_not_boxed(
        reporter: ErrorReporter, qtbot: QtBot, caplog: pytest.LogCaptureFixture) -> None:
    """Ctrl+C ends the app and its CLI together: the SDK's task that sends a last answer
    fails to write (as claude-agent-sdk raises it, chained); that is no error to show."""
    from claude_agent_sdk._errors import CLIConnectionError

    def sdk_write_after_exit() -> None:
        try:
            raise CLIConnectionError("Cannot write to terminated process (exit code: 143)")
        except CLIConnectionError:
            raise CLIConnectionError(
                "Cannot write to terminated process (exit code: 143)") from None

    def sdk_write_while_it_exits() -> None:  # the stdin pipe broke first
        try:
            raise CLIConnectionError("Failed to write to process stdin: ")
        except CLIConnectionError:
            raise CLIConnectionError("ProcessTransport is not ready for writing") from None

    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(reporter.loop_exception)
    try:
        loop.call_soon(sdk_write_after_exit)
        loop.call_soon(sdk_write_while_it_exits)
        loop.call_soon(lambda: (_ for _ in ()).throw(CLIConnectionError("Failed to start")))
        handled = asyncio.Event()
        loop.call_soon(handled.set)  # runs after the three above were handled
        await asyncio.wait_for(handled.wait(), 5)
    finally:
        loop.set_exception_handler(previous)
    qtbot.waitUntil(lambda: len(visible()) == 1)  # only the other connection error
    assert "Failed to start" in visible()[0].text()
    assert "it had already exited" in caplog.text


async def test_running_out_of_descriptors_is_logged_a_few_times_and_never_boxed(
        reporter: ErrorReporter, qtbot: QtBot, caplog: pytest.LogCaptureFixture) -> None:
    """A box needs descriptors from the display server too: opened while none were
    free, it hung the app for good."""
    loop = asyncio.get_running_loop()
    error = OSError(errno.EMFILE, "Too many open files")
    for _ in range(500):
        reporter.loop_exception(loop, {"message": "socket.accept() out of system resource",
                                       "exception": error})
    assert reporter.reported == 500
    assert visible() == []
    logged = [record for record in caplog.records
              if "out of system resource" in record.getMessage()]
    assert 1 <= len(logged) <= 10  # the rest are counted in the next line of that kind


async def test_a_closed_box_stays_closed_while_its_error_repeats(
        qtbot: QtBot, tmp_path: Path) -> None:
    now = [1000.0]
    reporter = ErrorReporter(tmp_path / "qoder-desktop.log", clock=lambda: now[0])
    try:
        reporter.show("ValueError: bad row")
        qtbot.waitUntil(lambda: len(visible()) == 1)
        box_with("bad row").done(0)
        qtbot.waitUntil(lambda: visible() == [])
        for _ in range(100):  # the same error in a loop: no box after box
            reporter.show("ValueError: bad row")
            now[0] += 1.0
        assert visible() == []
        reporter.show("KeyError: another")  # another error still shows
        qtbot.waitUntil(lambda: len(visible()) == 1)
        now[0] += REOPEN_QUIET
        reporter.show("ValueError: bad row")  # long after: shown again
        qtbot.waitUntil(lambda: len(visible()) == 2)
    finally:
        for box in visible():
            box.done(0)
