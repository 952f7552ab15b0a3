"""A decision dialog is awaitable (`answer = await dialog.decision()`), on the app's
qasync loop: the person's answer comes back, cancelling the wait closes the dialog, and
a dialog that closed unanswered says so instead of answering."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from helpers.loop import run, settle
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from qoder_desktop.approval.pending import ApprovalState, PendingApproval
from qoder_desktop.domain.models import ApprovalRequest, DecidedBy, Decision, DecisionKind
from qoder_desktop.ui.control.approvals import LATE_ANSWER
from qoder_desktop.ui.dialog_queue import DialogQueue
from qoder_desktop.ui.dialogs import dialog_for
from qoder_desktop.ui.dialogs.base import DialogWithdrawn
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


def test_awaiting_a_dialog_gives_the_persons_answer(
        loop: AppEventLoop, qtbot: QtBot, open_dialog: Any,
        make_request: Callable[..., ApprovalRequest]) -> None:
    dialog, _ = open_dialog(dialog_for(make_request("Bash", {"command": "make"})))

    async def scenario() -> Decision:
        answer = asyncio.ensure_future(dialog.decision())
        await asyncio.sleep(0)  # the wait has begun
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # the person's safe answer
        return await answer

    decision = run(loop, scenario())
    assert decision.kind is DecisionKind.DENY and decision.decided_by is DecidedBy.USER
    assert not dialog.isVisible()


def test_an_answer_given_before_the_wait_is_still_the_answer(
        loop: AppEventLoop, qtbot: QtBot, open_dialog: Any,
        make_request: Callable[..., ApprovalRequest]) -> None:
    dialog, _ = open_dialog(dialog_for(make_request("Bash", {"command": "make"})))
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert run(loop, dialog.decision()).kind is DecisionKind.DENY


def test_cancelling_the_wait_closes_the_dialog_and_answers_nothing(
        loop: AppEventLoop, open_dialog: Any,
        make_request: Callable[..., ApprovalRequest]) -> None:
    dialog, decisions = open_dialog(dialog_for(make_request("Bash", {"command": "rm -rf /"})))

    async def scenario() -> None:
        answer = asyncio.ensure_future(dialog.decision())
        await asyncio.sleep(0)
        answer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await answer

    run(loop, scenario())
    assert not dialog.isVisible() and dialog.is_withdrawn()
    assert decisions == []


def test_a_withdrawn_dialog_gives_no_answer(
        loop: AppEventLoop, open_dialog: Any,
        make_request: Callable[..., ApprovalRequest]) -> None:
    dialog, _ = open_dialog(dialog_for(make_request("Bash", {"command": "ls"})))

    async def scenario() -> None:
        answer = asyncio.ensure_future(dialog.decision())
        await asyncio.sleep(0)
        dialog.withdraw()
        with pytest.raises(DialogWithdrawn):
            await answer

    run(loop, scenario())


def test_the_queue_closes_the_dialog_when_its_approval_ends_elsewhere(
        loop: AppEventLoop, qtbot: QtBot, make_request: Callable[..., ApprovalRequest],
        approval_of: Callable[[ApprovalRequest], PendingApproval]) -> None:
    """A notification's answer (or a withdrawal) ends the approval; its dialog, which
    observes it, closes at once and its awaited answer is "none"."""
    queue = DialogQueue(None)
    pending = approval_of(make_request("Bash", {"command": "make"}))
    queue.set_pending([pending])
    [dialog] = queue.open_dialogs()  # (the queue closes and deletes it)

    async def scenario() -> None:
        answer = asyncio.ensure_future(dialog.decision())
        await pending.shown()  # its first frame was painted
        assert pending.state is ApprovalState.SHOWN
        assert pending.answer(Decision.deny("from the notification"))
        with pytest.raises(DialogWithdrawn):
            await answer
        await settle(lambda: queue.open_dialogs() == [])

    run(loop, scenario())
    queue.close_all()


def test_a_dialog_shows_a_newer_state_of_its_approval(
        loop: AppEventLoop, qtbot: QtBot, make_request: Callable[..., ApprovalRequest],
        approval_of: Callable[[ApprovalRequest], PendingApproval]) -> None:
    queue = DialogQueue(None)
    request = make_request("Bash", {"command": "npm test"})
    pending = approval_of(request)
    queue.set_pending([pending])
    [dialog] = queue.open_dialogs()  # (the queue closes and deletes it)
    marked = request.model_copy(update={"covered_by_rule": "Bash(npm test)"})
    assert pending.update(marked)
    assert dialog.request is marked
    pending.withdraw()
    assert queue.open_dialogs() == []
    queue.close_all()


def test_the_controller_gives_the_dialogs_answer_to_its_approval_and_says_a_late_one(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot, open_dialog: Any,
        make_request: Callable[..., ApprovalRequest],
        approval_of: Callable[[ApprovalRequest], PendingApproval]) -> None:
    statuses: list[str] = []
    desktop.window.show_status = statuses.append  # type: ignore[method-assign]
    first, late = (make_request("Bash", {"command": command}) for command in ("make", "ls"))
    answered, ended = approval_of(first), approval_of(late)
    dialog, _ = open_dialog(dialog_for(first))
    other, _ = open_dialog(dialog_for(late))

    async def scenario() -> None:
        waits = [asyncio.ensure_future(desktop.approvals.answer_from(dialog, answered)),
                 asyncio.ensure_future(desktop.approvals.answer_from(other, ended))]
        await asyncio.sleep(0)
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # the person answers the first
        ended.answer(Decision.deny("from the notification"))  # the second ends elsewhere…
        qtbot.keyClick(other, Qt.Key.Key_Escape)  # …as the person answers it too
        await asyncio.gather(*waits)

    run(loop, scenario())
    assert answered.decision is not None and answered.decision.decided_by is DecidedBy.USER
    assert ended.decision is not None and ended.decision.message == "from the notification"
    assert statuses == [LATE_ANSWER]
