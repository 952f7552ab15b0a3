"""The heap is trimmed once nothing has waited for a while, never while a request waits."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio

from helpers.loop import run, settle
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from qoder_desktop.diagnostics.memory import return_free_memory
from qoder_desktop.domain.models import ApprovalRequest, Backend, DecisionKind
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.idle_trim import IdleTrim
from qoder_desktop.ui.wiring import DesktopApp


def test_the_trim_runs_once_the_queue_has_stayed_empty(qtbot: QtBot) -> None:
    trimmed: list[int] = []
    idle = IdleTrim(idle_ms=20, trim=lambda: trimmed.append(1))
    idle.pending_changed(["a request"])
    assert not idle.is_armed()  # nothing is trimmed while a request waits
    idle.pending_changed([])
    assert idle.is_armed()
    qtbot.waitUntil(lambda: trimmed == [1])
    assert idle.trims == 1 and not idle.is_armed()


def test_a_new_request_puts_the_trim_off(qtbot: QtBot) -> None:
    trimmed: list[int] = []
    idle = IdleTrim(idle_ms=60_000, trim=lambda: trimmed.append(1))
    idle.pending_changed([])
    assert idle.is_armed()
    idle.pending_changed(["a request"])
    assert not idle.is_armed() and trimmed == []
    idle.trim_now()
    assert trimmed == [1] and idle.trims == 1


def test_the_real_trim_runs_on_linux() -> None:
    assert return_free_memory() is True


def test_answering_the_last_request_arms_the_apps_trim(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot) -> None:
    request = ApprovalRequest(session_id="s0", session_name="session 0",
                              backend=Backend.CLAUDE, tool_name="Bash",
                              tool_input={"command": "make"}, cwd="/tmp")

    async def scenario() -> DecisionKind:
        desktop.idle_trim.trim_now()  # start from a trim, nothing armed
        task = asyncio.ensure_future(desktop.broker.request(request))
        await settle(lambda: desktop.dialogs.open_dialogs())
        assert not desktop.idle_trim.is_armed()
        [dialog] = desktop.dialogs.open_dialogs()
        await settle(dialog.is_armed)
        qtbot.keyClick(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        decision = await task
        await settle(desktop.idle_trim.is_armed)
        return decision.kind

    assert run(loop, scenario()) is DecisionKind.ALLOW_ONCE
