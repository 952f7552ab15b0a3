"""The approval controller: what the person sees of waiting requests outside their
dialogs (status line, notifications, the tray) and how a dialog's trouble ends (a deny
with the reason). The whole desktop wiring, a real broker and SQLite, offscreen."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from helpers.loop import run, settle
from pytestqt.qtbot import QtBot

from qoder_desktop.approval.pending import PendingApproval
from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
)
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


def _bash(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="session 0", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp")


def _status(desktop: DesktopApp) -> str:
    return desktop.window.statusBar().currentMessage()


def test_an_answer_for_a_request_no_longer_waiting_is_said_not_raised(
        desktop: DesktopApp) -> None:
    desktop.approvals.decided("gone-request", Decision.allow_once({"command": "make"}))
    assert _status(desktop) == "That request was already answered or withdrawn."


def test_a_dialog_that_cannot_be_built_denies_its_request_with_the_reason(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    async def scenario() -> Decision:
        task = asyncio.ensure_future(desktop.broker.request(_bash("make deploy")))
        await settle(lambda: bool(desktop.broker.pending()))
        [request] = desktop.broker.pending()
        desktop.approvals.build_failed(request.request_id,
                                       "The approval dialog could not be built: no font")
        return await task

    decision = run(loop, scenario())
    assert decision.kind is DecisionKind.ERROR and not decision.kind.allows
    assert decision.decided_by is DecidedBy.ERROR
    assert decision.message == "The approval dialog could not be built: no font"
    assert _status(desktop) == "The approval dialog could not be built: no font"


def test_the_tray_opens_a_waiting_requests_dialog_but_none_for_an_answered_one(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    async def scenario() -> None:
        first = asyncio.ensure_future(desktop.broker.request(_bash("make one")))
        second = asyncio.ensure_future(desktop.broker.request(_bash("make two")))
        await settle(lambda: len(desktop.broker.pending()) == 2)
        await settle(lambda: bool(desktop.dialogs.open_dialogs()))
        one, two = desktop.broker.pending()
        [shown] = desktop.dialogs.open_dialogs()
        assert shown.request.request_id == one.request_id  # one dialog at a time
        desktop.approvals.open_from_tray(two.request_id)
        assert two.request_id in [d.request.request_id for d in desktop.dialogs.open_dialogs()]
        desktop.broker.answer(two.request_id, Decision.deny("no"))
        await second
        await settle(lambda: two.request_id not in [
            d.request.request_id for d in desktop.dialogs.open_dialogs()])
        desktop.approvals.open_from_tray(two.request_id)  # answered: nothing opens
        assert two.request_id not in [
            d.request.request_id for d in desktop.dialogs.open_dialogs()]
        assert desktop.window.isVisible()  # the window came up all the same
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)

    run(loop, scenario())


@pytest.mark.parametrize(("enabled", "only_when_inactive", "app_active", "announced"), [
    (True, True, False, True),
    (True, True, True, False),  # the person is in the app: the dialog is enough
    (True, False, True, True),
    (False, False, False, False),  # notifications off
])
def test_a_new_request_is_announced_as_the_person_chose(
        desktop: DesktopApp, qtbot: QtBot, approval_of: Callable[[ApprovalRequest],
                                                                 PendingApproval],
        enabled: bool, only_when_inactive: bool, app_active: bool, announced: bool) -> None:
    """Without a notification service the notifier falls back to the tray balloon; that
    fallback is what a person would see announced."""
    prefs = desktop.current_settings.value.notifications.model_copy(
        update={"enabled": enabled, "only_when_inactive": only_when_inactive})
    desktop.current_settings.value = Settings(notifications=prefs)
    if app_active:
        desktop.window.show()
        desktop.window.activateWindow()
        qtbot.waitUntil(lambda: desktop.window.isActiveWindow())
    fell_back: list[ApprovalRequest] = []
    desktop.notifier.fall_back.connect(fell_back.append)
    request = _bash("make").model_copy(update={"session_id": "s-1"})
    # (synchronous: no later event to wait on)
    desktop.approvals.approval_added(approval_of(request))
    assert fell_back == ([request] if announced else [])
