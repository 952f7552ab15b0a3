"""The whole desktop wiring under one qasync loop: broker → bridge → dialogs → decisions."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import gc
import json
import weakref
from pathlib import Path
from typing import Any

from helpers.loop import run, settle
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPushButton
from pytestqt.qtbot import QtBot

from qoder_desktop.config.secrets import SecretValue
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    SessionInfo,
)
from qoder_desktop.gateway.contract import GatewayToken
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


def _bash(session: int, command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id=f"s{session}", session_name=f"session {session}",
                           backend=Backend.CLAUDE, tool_name="Bash",
                           tool_input={"command": command}, cwd="/tmp")


def test_a_request_opens_its_dialog_and_the_answer_reaches_the_agent(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot) -> None:
    async def scenario() -> Decision:
        task = asyncio.ensure_future(desktop.broker.request(_bash(0, "make build")))
        await settle(lambda: desktop.dialogs.open_dialogs())
        [dialog] = desktop.dialogs.open_dialogs()
        assert dialog.windowTitle().startswith("Approve Bash")
        # the window and the tray follow the dialog a loop turn or two later
        await settle(lambda: desktop.tray.tooltip().endswith("1 pending"))
        assert desktop.window.ui.queueView.request_ids() == [dialog.request.request_id]
        await settle(dialog.is_armed)
        qtbot.keyClick(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        return await task

    decision = run(loop, scenario())
    assert decision.kind is DecisionKind.ALLOW_ONCE
    assert decision.final_input == {"command": "make build"}
    run(loop, settle(lambda: desktop.tray.tooltip().endswith("0 pending")))
    assert desktop.window.ui.queueView.request_ids() == []


def test_a_withdrawn_request_closes_its_dialog_and_a_late_click_does_nothing(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    async def scenario() -> None:
        task = asyncio.ensure_future(desktop.broker.request(_bash(0, "rm -rf build")))
        await settle(lambda: desktop.dialogs.open_dialogs())
        [dialog] = desktop.dialogs.open_dialogs()
        request_id = dialog.request.request_id
        await settle(dialog.is_armed)
        emitted: list[object] = []
        dialog.decided.connect(emitted.append)
        task.cancel()
        await settle(lambda: desktop.dialogs.open_dialogs() == [])
        assert emitted == []
        assert desktop.broker.pending() == []
        late = desktop.bridge.answer(request_id, Decision.allow_once({"command": "rm"}))
        assert late is False

    run(loop, scenario())
    [entry] = desktop.broker._ledger.entries("s0")  # type: ignore[attr-defined]
    assert entry.outcome is DecisionKind.WITHDRAWN


def test_a_request_whose_dialog_cannot_be_built_is_denied_with_the_reason(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    broken = ApprovalRequest(session_id="s1", backend=Backend.CLAUDE,
                             tool_name="AskUserQuestion", tool_input={"questions": "nope"})
    decision = run(loop, desktop.broker.request(broken))
    assert decision.kind is DecisionKind.ERROR
    assert "questions" in decision.message
    assert desktop.dialogs.open_dialogs() == []


def test_twenty_requests_from_three_sessions_one_dialog_at_a_time_each_answered_once(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    async def scenario() -> list[Decision]:
        tasks = [asyncio.ensure_future(desktop.broker.request(_bash(i % 3, f"job {i}")))
                 for i in range(20)]
        await settle(lambda: len(desktop.broker.pending()) == 20)
        await settle(lambda: "20 pending" in desktop.tray.tooltip())
        for expected in range(20):
            await settle(lambda: len(desktop.dialogs.open_dialogs()) == 1)
            [dialog] = desktop.dialogs.open_dialogs()
            assert dialog.request.tool_input["command"] == f"job {expected}"
            await settle(dialog.is_armed)
            dialog.emit_decision(Decision.deny(f"no {expected}"))
            await settle(lambda d=dialog: not desktop.broker.is_pending(d.request.request_id))
        return list(await asyncio.gather(*tasks))

    decisions = run(loop, scenario(), timeout=60)
    assert [d.message for d in decisions] == [f"no {i}" for i in range(20)]
    assert all(d.decided_by is DecidedBy.USER for d in decisions)
    assert desktop.dialogs.open_dialogs() == []


def test_opening_a_queued_request_from_the_window_shows_that_request(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    async def scenario() -> None:
        tasks = [asyncio.ensure_future(desktop.broker.request(_bash(0, f"c{i}")))
                 for i in range(3)]
        await settle(lambda: len(desktop.broker.pending()) == 3)
        await settle(lambda: len(desktop.window.ui.queueView.request_ids()) == 3)
        third = desktop.broker.pending()[2]
        assert desktop.window.ui.queueView.request_ids()[2] == third.request_id
        desktop.window.open_request_requested.emit(third.request_id)
        dialog = desktop.dialogs.dialog(third.request_id)
        assert dialog is not None and dialog.isVisible()
        desktop.broker.withdraw_session("s0")
        await asyncio.gather(*tasks)
        await settle(lambda: desktop.dialogs.open_dialogs() == [])

    run(loop, scenario())


def test_a_session_stopping_with_many_pending_updates_the_views_once_not_per_request(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    window_updates: list[list[str]] = []
    set_pending = desktop.window.set_pending

    def counted(pending: list[ApprovalRequest]) -> None:
        window_updates.append([r.request_id for r in pending])
        set_pending(pending)

    desktop.window.set_pending = counted  # type: ignore[method-assign,assignment]

    async def scenario() -> None:
        stopping = [asyncio.ensure_future(desktop.broker.request(_bash(0, f"s0 job {i}")))
                    for i in range(20)]
        other = asyncio.ensure_future(desktop.broker.request(_bash(1, "s1 job")))
        await settle(lambda: len(desktop.window.ui.queueView.request_ids()) == 21)
        [dialog] = desktop.dialogs.open_dialogs()
        assert dialog.request.tool_input["command"] == "s0 job 0"
        survivor = desktop.broker.pending()[-1].request_id
        window_updates.clear()
        assert desktop.broker.withdraw_session("s0") == 20
        await asyncio.gather(*stopping)
        await settle(lambda: desktop.window.ui.queueView.request_ids() == [survivor])
        [dialog] = desktop.dialogs.open_dialogs()
        assert dialog.request.request_id == survivor
        assert desktop.window.session_pane.model.pending_count("s0") == 0
        assert desktop.window.session_pane.model.pending_count("s1") == 1
        assert "1 pending" in desktop.tray.tooltip()
        # A later request's update comes after any the stop still held back.
        next_one = _bash(1, "s1 later")
        later = asyncio.ensure_future(desktop.broker.request(next_one))
        await settle(lambda: len(desktop.window.ui.queueView.request_ids()) == 2)
        stop_updates = [ids for ids in window_updates if next_one.request_id not in ids]
        assert 1 <= len(stop_updates) <= 2  # not one per withdrawn request
        assert stop_updates[-1] == [survivor]
        desktop.broker.withdraw_session("s1")
        await asyncio.gather(other, later)

    run(loop, scenario())


def test_connect_dialog_shows_a_placeholder_and_copies_the_real_token(
        desktop: DesktopApp, qtbot: QtBot) -> None:
    desktop.gateway_token = GatewayToken(SecretValue("s3cret-gateway-token-value"),
                                         persistent=True,
                                         message="Kept in the keyring.")
    desktop.open_connect_dialog()
    dialog = desktop.connect_dialog
    assert dialog is not None
    qtbot.addWidget(dialog)
    shown = "\n".join(view.toPlainText() for view in dialog.snippet_views.values())
    assert "--permission-prompt-tool mcp__qoder-desktop__approve" in shown
    assert "s3cret-gateway-token-value" not in shown
    copied = dialog.copy("claude_mcp_config")
    assert "Bearer s3cret-gateway-token-value" in copied
    assert QApplication.clipboard().text() == copied


# -- terminal agents (PermissionRequest hooks) ----------------------------------------


def test_settings_install_and_uninstall_the_terminal_hook(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot,
        isolated_home: Path) -> None:
    from qoder_desktop.terminal.install import is_our_command

    settings_file = isolated_home / ".claude" / "settings.json"

    async def scenario() -> None:
        desktop.open_settings()
        dialog = desktop.settings_dialog
        assert dialog is not None
        await settle(lambda: "not installed" in dialog.hook_status("claude"))
        qtbot.mouseClick(dialog.findChild(QPushButton, "claudeHookInstall"),
                         Qt.MouseButton.LeftButton)
        await settle(lambda: "Claude Code: installed" in dialog.hook_status("claude"))
        [group] = json.loads(settings_file.read_text())["hooks"]["PermissionRequest"]
        assert is_our_command(group["hooks"][0]["command"])
        assert "not installed" in dialog.hook_status("qoder")
        qtbot.mouseClick(dialog.findChild(QPushButton, "claudeHookUninstall"),
                         Qt.MouseButton.LeftButton)
        await settle(lambda: "not installed" in dialog.hook_status("claude"))
        assert json.loads(settings_file.read_text()) == {}
        dialog.reject()

    run(loop, scenario())


def test_a_terminal_prompt_opens_the_same_dialog_and_the_hook_prints_the_answer(
        desktop: DesktopApp, loop: AppEventLoop, tmp_path: Path) -> None:
    from qoder_desktop.terminal import hook_client
    from qoder_desktop.terminal.server import TerminalHookServer

    event = {"hook_event_name": "PermissionRequest", "session_id": "cli-session-1",
             "cwd": str(tmp_path), "permission_mode": "default", "tool_name": "Bash",
             "tool_input": {"command": "make deploy"}, "permission_suggestions": []}

    async def scenario() -> dict[str, Any] | None:
        server = TerminalHookServer(desktop.broker, desktop.hub, wait_seconds=30)
        desktop.start_terminal_hooks(server)
        await settle(lambda: server.running)
        answer = asyncio.ensure_future(asyncio.to_thread(hook_client.ask_app, "claude", event))
        await settle(lambda: desktop.dialogs.open_dialogs())
        [dialog] = desktop.dialogs.open_dialogs()
        assert dialog.windowTitle().startswith("Approve Bash")
        session = desktop.hub.session("cli-session-1")
        assert session.backend is Backend.TERMINAL
        desktop.bridge.answer(dialog.request.request_id, Decision.deny("Not from here."))
        output = await answer
        await server.stop()
        return output

    output = run(loop, scenario())
    assert output == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "deny", "message": "Not from here."}}}


# -- events flow one way: the hub publishes, the window renders -------------------------


def test_an_approved_plan_of_a_gateway_agent_reaches_it_and_shows_no_error(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot) -> None:
    from helpers.gateway_client import mcp_client, tool_result

    from qoder_desktop.gateway.server import ApprovalGateway
    from qoder_desktop.ui.dialogs import PlanDialog

    token = GatewayToken(SecretValue("plan-gateway-token-0123456789"), persistent=False,
                         message="Only for this run.")
    gateway = ApprovalGateway(desktop.broker, desktop.hub, token, port=0)
    statuses: list[str] = []
    show_status = desktop.window.show_status

    def recorded(text: str) -> None:
        statuses.append(text)
        show_status(text)

    desktop.window.show_status = recorded  # type: ignore[method-assign]
    plan = {"tool_name": "ExitPlanMode", "tool_use_id": "toolu_plan",
            "input": {"plan": "1. Tidy up\n2. Run the tests"}}

    async def scenario() -> dict[str, Any]:
        desktop.start_gateway(gateway, token)
        await settle(lambda: gateway.running)
        try:
            async with mcp_client(gateway.url, token.reveal(), name="outside-agent") as client:
                call = asyncio.ensure_future(client.call_tool("approve", plan))
                await settle(lambda: desktop.dialogs.open_dialogs())
                [dialog] = desktop.dialogs.open_dialogs()
                assert isinstance(dialog, PlanDialog)
                assert desktop.hub.session(dialog.request.session_id).backend is Backend.EXTERNAL
                await settle(dialog.is_armed)
                qtbot.keyClick(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
                result = tool_result(await call)
                # A mode switch (there must be none for a gateway agent) would run as
                # background work of the hub or the window: none is left to fail later.
                await settle(lambda: not desktop.hub._tasks  # type: ignore[attr-defined]
                             and not desktop.tasks._tasks)  # type: ignore[attr-defined]
                return result
        finally:
            await gateway.stop()

    result = run(loop, scenario(), timeout=30)
    assert result["behavior"] == "allow"
    assert result["updatedInput"] == plan["input"]
    assert not [text for text in statuses if "failed" in text], statuses


def test_a_session_grant_shows_in_the_rules_view_and_a_revoke_strikes_it(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    from qoder_desktop.domain.models import PermissionSuggestion
    from qoder_desktop.ui.widgets.rules_view import COL_ACTION

    desktop.window.update_session(SessionInfo(session_id="s0", name="session 0",
                                              backend=Backend.CLAUDE, cwd="/tmp"))
    request = _bash(0, "npm test")
    grant = PermissionSuggestion.from_wire({
        "type": "addRules", "behavior": "allow", "destination": "session",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}]})

    async def scenario() -> None:
        task = asyncio.ensure_future(desktop.broker.request(request))
        await settle(lambda: desktop.dialogs.open_dialogs())
        [dialog] = desktop.dialogs.open_dialogs()
        dialog.emit_decision(Decision.allow_session({"command": "npm test"}, (grant,)))
        await task

    run(loop, scenario())
    [rule] = desktop.hub.rules("s0")
    view = desktop.window.ui.rulesView
    assert view.item_for(rule.rule_id) is not None
    assert view.revoke_button(rule.rule_id) is not None
    desktop.window.revoke_requested.emit(rule.rule_id)
    assert view.revoke_button(rule.rule_id) is None
    item = view.item_for(rule.rule_id)
    assert item is not None and item.text(COL_ACTION).startswith("Revoked")


# -- life cycle and confirmations ------------------------------------------------------


def test_quitting_twice_shuts_down_once_and_raises_nothing(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    desktop.show()
    errors: list[str] = []
    desktop.window.show_status = errors.append  # type: ignore[method-assign]
    first = desktop.quit()
    second = desktop.quit()
    assert second is first
    loop.run_until_complete(first)  # its last step quits the app, which stops the loop
    assert desktop.quit() is first
    assert first.exception() is None
    assert errors == []
    assert not desktop.window.isVisible()


def test_a_handed_over_bypass_session_waits_for_the_real_confirmation(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QMessageBox

    from qoder_desktop.domain.models import PermissionMode
    from qoder_desktop.ui import start_up as start_up_module

    message = {"action": "start", "cwd": str(tmp_path),
               "argv": ["--backend", "claude", "--prompt", "x",
                        "--permission-mode", "bypassPermissions"]}

    def open_box() -> QMessageBox | None:
        box = desktop.window.findChild(QMessageBox, "confirmDangerousMode")
        return box if box is not None and box.isVisible() else None

    async def scenario() -> None:
        start_up_module.on_handover(message, desktop)
        await settle(lambda: open_box() is not None)
        assert desktop.hub.sessions() == []
        box = open_box()
        assert box is not None
        qtbot.keyClick(box, Qt.Key.Key_Escape)
        await settle(lambda: open_box() is None)
        assert desktop.hub.sessions() == []  # cancelled: nothing started (and, below,
        # the confirmed second hand-over makes the one session there is)

        start_up_module.on_handover(message, desktop)
        await settle(lambda: open_box() is not None)
        box = open_box()
        assert box is not None
        accept = next(b for b in box.buttons()
                      if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
        qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
        await settle(lambda: desktop.hub.sessions() != [])

    run(loop, scenario())
    [session] = desktop.hub.sessions()
    assert session.permission_mode is PermissionMode.BYPASS
    assert session.cwd == str(tmp_path)


def test_the_transcript_shown_on_selection_is_the_hubs(desktop: DesktopApp) -> None:
    from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind

    for index in (0, 1):
        desktop.window.update_session(SessionInfo(session_id=f"s{index}", name=f"session {index}",
                                                  backend=Backend.CLAUDE, cwd="/tmp"))
    for index, text in ((0, "zero speaks"), (1, "one speaks"), (1, "one again")):
        desktop.hub.add_transcript_line(TranscriptEvent(
            session_id=f"s{index}", kind=TranscriptKind.ASSISTANT_TEXT, text=text))
    shown = desktop.window.ui.transcriptView.toPlainText
    assert desktop.window.selected_session_id() == "s1"  # a session started here is selected
    desktop.window.select_session("s0")
    assert "zero speaks" in shown() and "one speaks" not in shown()
    desktop.window.select_session("s1")
    assert "one speaks" in shown() and "one again" in shown() and "zero" not in shown()
    desktop.window.select_session("s0")
    assert "zero speaks" in shown() and "one" not in shown()


def test_answering_many_dialogs_leaves_nothing_behind_on_away_modes_control(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    """Every answer tells Away mode the person is back; a week of answers must not each
    leave a reference behind (PySide6 keeps one for good per bound method of a plain
    object connected to a signal)."""
    def answer(count: int) -> None:
        async def scenario() -> None:
            for i in range(count):
                task = asyncio.ensure_future(desktop.broker.request(_bash(0, f"job {i}")))
                await settle(lambda: len(desktop.dialogs.open_dialogs()) == 1)
                [dialog] = desktop.dialogs.open_dialogs()
                await settle(dialog.is_armed)
                dialog.emit_decision(Decision.deny("no"))
                await task
        run(loop, scenario(), timeout=60)

    answer(2)
    gc.collect()
    before = weakref.getweakrefcount(desktop.away)
    answer(10)
    gc.collect()
    assert weakref.getweakrefcount(desktop.away) == before
