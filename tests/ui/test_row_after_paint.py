"""A request's ledger row is written once its dialog has painted (the writer thread
does not compete with the dialog's first frame), and never lost on the way."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.loop import run, settle
from PySide6.QtCore import QEvent, QObject
from pytestqt.qtbot import QtBot

from qoder_desktop.approval import pending
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.store.database import Database
from qoder_desktop.ui.dialogs import BaseDecisionDialog
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


def _bash(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="session 0", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp")


def _rows(desktop: DesktopApp, db: Database) -> list[Any]:
    db.writer.flush()
    return desktop.broker._ledger.entries("s0")  # type: ignore[attr-defined]


class _Painted(QObject):
    def __init__(self, dialog: BaseDecisionDialog) -> None:
        super().__init__(dialog)
        self.seen = False
        dialog.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.seen = True
        return False


def test_the_row_is_written_after_the_dialog_painted_and_the_answer_is_recorded(
        desktop: DesktopApp, loop: AppEventLoop, db: Database, qtbot: QtBot,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending, "ROW_HOLD_MAX_S", 30.0)  # only the paint counts
    at_open: list[list[Any]] = []
    painted: list[_Painted] = []

    def opened(dialog: BaseDecisionDialog) -> None:
        at_open.append(_rows(desktop, db))  # the dialog is shown, not painted yet
        painted.append(_Painted(dialog))

    desktop.dialogs.dialog_opened.connect(opened)

    async def scenario() -> Decision:
        task = asyncio.ensure_future(desktop.broker.request(_bash("make build")))
        await settle(lambda: _rows(desktop, db))
        assert at_open == [[]] and painted[0].seen
        [dialog] = desktop.dialogs.open_dialogs()
        await settle(dialog.is_armed)
        desktop.bridge.answer(dialog.request.request_id,
                              Decision.allow_once({"command": "make build"}))
        return await task

    assert run(loop, scenario()).kind is DecisionKind.ALLOW_ONCE
    [entry] = _rows(desktop, db)
    assert entry.outcome is DecisionKind.ALLOW_ONCE


def test_no_row_is_written_while_the_dialog_paints_its_first_frame(
        desktop: DesktopApp, loop: AppEventLoop, db: Database,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The row is queued the loop turn after the first Paint event, not during it."""
    monkeypatch.setattr(pending, "ROW_HOLD_MAX_S", 30.0)
    at_paint: list[list[Any]] = []
    factory = desktop.dialogs._factory

    class _AtPaint(QObject):
        def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and not at_paint:
                at_paint.append(_rows(desktop, db))  # every other watcher has run
            return False

    def watched(request: ApprovalRequest, parent: Any) -> BaseDecisionDialog:
        dialog = factory(request, parent)
        watch = _AtPaint(dialog)  # installed first, so it sees the Paint event last
        dialog.installEventFilter(watch)
        return dialog

    monkeypatch.setattr(desktop.dialogs, "_factory", watched)

    async def scenario() -> None:
        task = asyncio.ensure_future(desktop.broker.request(_bash("make check")))
        await settle(lambda: _rows(desktop, db))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(loop, scenario())
    assert at_paint == [[]]
    [entry] = _rows(desktop, db)
    assert entry.outcome is DecisionKind.WITHDRAWN


def test_a_request_withdrawn_before_its_dialog_painted_is_recorded_as_withdrawn(
        desktop: DesktopApp, loop: AppEventLoop, db: Database,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending, "ROW_HOLD_MAX_S", 30.0)
    tasks: list[asyncio.Future[Decision]] = []
    desktop.dialogs.dialog_opened.connect(lambda _dialog: tasks[0].cancel())

    async def scenario() -> None:
        tasks.append(asyncio.ensure_future(desktop.broker.request(_bash("rm -rf build"))))
        with pytest.raises(asyncio.CancelledError):
            await tasks[0]
        await settle(lambda: desktop.dialogs.open_dialogs() == [])

    run(loop, scenario())
    [entry] = _rows(desktop, db)
    assert entry.outcome is DecisionKind.WITHDRAWN


def test_a_second_request_behind_an_open_dialog_is_written_at_once(
        desktop: DesktopApp, loop: AppEventLoop, db: Database,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending, "ROW_HOLD_MAX_S", 30.0)

    async def scenario() -> None:
        first = asyncio.ensure_future(desktop.broker.request(_bash("make")))
        await settle(lambda: len(_rows(desktop, db)) == 1)
        second = asyncio.ensure_future(desktop.broker.request(_bash("ls")))
        await settle(lambda: len(_rows(desktop, db)) == 2)  # no dialog of its own yet
        assert len(desktop.dialogs.open_dialogs()) == 1
        for task in (first, second):
            task.cancel()
        for task in (first, second):
            with pytest.raises(asyncio.CancelledError):
                await task

    run(loop, scenario())
