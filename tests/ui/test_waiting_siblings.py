"""A grant made in one dialog while another request of the session waits, through the
whole desktop wiring on the qasync loop: the waiting request is marked "covered by your
new rule" in its open dialog and in the window's queue, and only the person's own key
allows it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio

from helpers.loop import run, settle
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
)
from qoder_desktop.ui.dialogs import ApprovalDialog
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.widgets.queue_view import COL_WHAT
from qoder_desktop.ui.wiring import DesktopApp

CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = CTRL | Qt.KeyboardModifier.ShiftModifier


def _bash(command: str, agent: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="session 0", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp",
                           agent_id=agent)


def test_a_grant_marks_the_waiting_siblings_dialog_and_row_and_the_person_allows_it(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot) -> None:
    granted, waiting = _bash("npm test", "sub-1"), _bash("npm test", "sub-2")

    async def scenario() -> tuple[Decision, Decision]:
        first = asyncio.ensure_future(desktop.broker.request(granted))
        await settle(lambda: desktop.dialogs.dialog(granted.request_id))
        second = asyncio.ensure_future(desktop.broker.request(waiting))
        await settle(lambda: desktop.broker.is_pending(waiting.request_id))
        # The person has the sibling's dialog open too (from the window's queue).
        desktop.window.open_request_requested.emit(waiting.request_id)
        dialog_a = desktop.dialogs.dialog(granted.request_id)
        dialog_b = desktop.dialogs.dialog(waiting.request_id)
        assert isinstance(dialog_a, ApprovalDialog) and isinstance(dialog_b, ApprovalDialog)
        assert "new rule" not in dialog_b.ui.reasonLabel.text()
        await settle(lambda: dialog_a.is_armed() and dialog_b.is_armed())
        armed_b: list[bool] = []
        dialog_b.gate.armed_changed.connect(armed_b.append)

        # (dialog B, opened last, is the active window: the person clicks in dialog A)
        qtbot.mouseClick(dialog_a.ui.allowSessionButton, Qt.MouseButton.LeftButton)
        assert (await first).kind is DecisionKind.ALLOW_SESSION
        await settle(lambda: "new rule" in dialog_b.ui.reasonLabel.text())
        note = dialog_b.ui.reasonLabel.text()
        assert note.startswith("Covered by your new rule Bash(npm test)")
        assert "the agent asked before it held that rule" in note
        assert "you decide (Ctrl+Return allows this call once)" in note
        assert armed_b[:1] == [False]  # its keys start their arming delay again
        assert not second.done() and desktop.broker.is_pending(waiting.request_id)
        await settle(lambda: desktop.window.ui.queueView.item_for(waiting.request_id)
                     is not None and "new rule" in desktop.window.ui.queueView.item_for(
                         waiting.request_id).text(COL_WHAT))
        row = desktop.window.ui.queueView.item_for(waiting.request_id)
        assert row is not None and row.text(COL_WHAT).startswith(
            "[covered by your new rule Bash(npm test) — you decide] Bash: npm test")
        assert not dialog_b.ui.allowOnceButton.isDefault()  # never pre-selected

        await settle(dialog_b.is_armed)
        assert not second.done()
        qtbot.keyClick(dialog_b, Qt.Key.Key_Return, CTRL)  # the person allows it once
        return await first, await second

    grant, allowed = run(loop, scenario())
    assert grant.kind is DecisionKind.ALLOW_SESSION
    assert (allowed.kind, allowed.decided_by) == (DecisionKind.ALLOW_ONCE, DecidedBy.USER)
    rows = {e.entry_id: e for e in desktop.broker._ledger.entries("s0")}  # type: ignore[attr-defined]
    assert (rows[waiting.request_id].decided_by, rows[waiting.request_id].matched_rule) == (
        DecidedBy.USER, "Bash(npm test)")


def test_a_sibling_whose_dialog_opens_after_the_grant_is_marked_from_its_first_frame(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot) -> None:
    """The grant's dialog closes and the next one opens in the same turn: with the mark."""
    granted, waiting = _bash("npm test", "sub-1"), _bash("npm test", "sub-2")

    async def scenario() -> None:
        first = asyncio.ensure_future(desktop.broker.request(granted))
        await settle(lambda: desktop.dialogs.dialog(granted.request_id))
        second = asyncio.ensure_future(desktop.broker.request(waiting))
        await settle(lambda: desktop.broker.is_pending(waiting.request_id))
        opened: list[ApprovalDialog] = []
        desktop.dialogs.dialog_opened.connect(opened.append)
        dialog_a = desktop.dialogs.dialog(granted.request_id)
        assert dialog_a is not None
        await settle(dialog_a.is_armed)
        qtbot.keyClick(dialog_a, Qt.Key.Key_Return, CTRL_SHIFT)
        await first
        await settle(lambda: opened)
        assert opened[0].request.request_id == waiting.request_id
        assert opened[0].ui.reasonLabel.text().startswith("Covered by your new rule")
        assert not second.done()
        await settle(opened[0].is_armed)
        qtbot.keyClick(opened[0], Qt.Key.Key_Escape)  # the person may deny it as well
        assert (await second).kind is DecisionKind.DENY

    run(loop, scenario())
