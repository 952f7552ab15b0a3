"""Desktop notifications with buttons, for real: a private D-Bus session bus, a small
freedesktop notification server on it, and the whole desktop wiring on the app's loop."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.loop import run as run_on_loop
from helpers.loop import settle as settle_on_loop
from helpers.notification_server import NotificationServer, NotifyCall, dbus_daemon, private_bus
from pytestqt.qtbot import QtBot

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import NotificationSettings, Settings
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    DecisionKind,
    SessionInfo,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.notifications import (
    NOTIFICATION_DENY,
    TOO_EARLY,
)
from qoder_desktop.ui.wiring import DesktopApp

pytestmark = pytest.mark.skipif(dbus_daemon() is None,
                                reason="needs dbus-daemon (Debian: dbus; see .ci/run)")

T = TypeVar("T")
APPROVAL_ACTIONS = [("default", ""), ("allow", "Allow once"), ("deny", "Deny"),
                    ("open", "Open…")]


def run(loop: AppEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    """`helpers.loop.run` with room for a D-Bus round trip (15 s)."""
    return run_on_loop(loop, coroutine, timeout=15)


async def settle(condition: Any) -> None:
    """`helpers.loop.settle` with room for a D-Bus round trip (10 s)."""
    await settle_on_loop(condition, timeout=10.0)


def _desktop(db: Database, tmp_path: Path) -> DesktopApp:
    db.upsert_session(SessionInfo(session_id="s0", name="slow", backend=Backend.CLAUDE,
                                  cwd=str(tmp_path)))
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)

    def no_sessions(*_args: Any) -> Any:
        raise AssertionError("these tests start no agent")

    settings = Settings(notifications=NotificationSettings(only_when_inactive=False))
    hub = SessionHub(db, ledger, broker, no_sessions)
    return DesktopApp(broker, hub, SecretStore(), settings, tmp_path / "settings.json")


@pytest.fixture
def desktop(db: Database, loop: AppEventLoop, qtbot: QtBot,
            tmp_path: Path) -> Iterator[DesktopApp]:
    app = _desktop(db, tmp_path)
    qtbot.addWidget(app.window)
    yield app
    app.dialogs.close_all()
    app.bridge.unsubscribe()
    app.tray.dispose()
    run(loop, app.notifier.close_all())


def _bash(command: str, **extra: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="slow", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command, **extra},
                           cwd="/tmp")


def _question() -> ApprovalRequest:
    return ApprovalRequest(
        session_id="s0", session_name="slow", backend=Backend.CLAUDE,
        tool_name="AskUserQuestion", tool_input={"questions": [
            {"question": "Allow <b>which</b> layout?", "header": "Layout",
             "multiSelect": False, "options": [{"label": "Allow grid", "description": ""},
                                               {"label": "List", "description": ""}]}]})


async def _notified(desktop: DesktopApp, server: NotificationServer,
                    request: ApprovalRequest) -> tuple[asyncio.Future[Decision], NotifyCall]:
    """Ask the broker for `request`; returns the agent's pending answer and its Notify."""
    before = len(server.notified)
    answer = asyncio.ensure_future(desktop.broker.request(request))
    await settle(lambda: len(server.notified) > before
                 and desktop.notifier.is_showing(request.request_id))
    return answer, server.last()


async def _opened_after(desktop: DesktopApp, server: NotificationServer,
                        call: NotifyCall) -> None:
    """Click `call`'s body and wait until the app opened its request: the clicks sent
    before it were handled by then (the server's signals arrive in order)."""
    opened: list[str] = []
    desktop.notifier.open_request.connect(opened.append)
    try:
        server.click(call.notification_id, "default")
        await settle(lambda: bool(opened))
    finally:
        desktop.notifier.open_request.disconnect(opened.append)


def test_an_approval_is_notified_as_plain_text_with_its_three_buttons(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    async def scenario() -> NotifyCall:
        status = await desktop.notifier.start()
        assert status.available and status.buttons
        answer, call = await _notified(
            desktop, server, _bash("echo finished > slow.txt", description="Record it"))
        answer.cancel()
        return call

    call = run(loop, scenario())
    assert call.app_name == "Qoder Desktop"
    assert call.summary == "Bash in slow wants approval"
    assert call.body == "echo finished &gt; slow.txt"  # the whole command, from its start
    assert call.action_pairs() == APPROVAL_ACTIONS


def test_allow_once_acts_only_after_arming_and_exactly_once(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    async def scenario() -> Decision:
        await desktop.notifier.start()
        desktop.notifier.arming_delay_ms = 60_000  # this one never arms during the test
        early, first = await _notified(desktop, server, _bash("make build"))
        server.click(first.notification_id, "allow")
        await settle(lambda: desktop.window.ui.statusBar.currentMessage() == TOO_EARLY)
        assert not early.done()  # the click before arming did nothing
        [dialog] = desktop.dialogs.open_dialogs()
        assert dialog.request.tool_input == {"command": "make build"}
        early.cancel()

        desktop.notifier.arming_delay_ms = 400  # the dialogs' arming delay
        armed: list[str] = []
        desktop.notifier.armed.connect(armed.append)
        request = _bash("make test")
        later, second = await _notified(desktop, server, request)
        await settle(lambda: armed == [request.request_id])
        server.click(second.notification_id, "allow")
        server.click(second.notification_id, "deny")
        server.click(second.notification_id, "allow")
        return await later

    allowed = run(loop, scenario())
    assert allowed.kind is DecisionKind.ALLOW_ONCE
    assert allowed.final_input == {"command": "make test"}
    outcomes = [entry.outcome for entry in desktop.broker._ledger.entries("s0")]  # type: ignore[attr-defined]
    assert sorted(outcomes) == sorted([DecisionKind.ALLOW_ONCE, DecisionKind.WITHDRAWN])


def test_answering_in_the_dialog_closes_the_notification(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    async def scenario() -> Decision:
        await desktop.notifier.start()
        answer, call = await _notified(desktop, server, _bash("make build"))
        [dialog] = desktop.dialogs.open_dialogs()
        await settle(dialog.is_armed)
        dialog.deny()
        decision = await answer
        await settle(lambda: call.notification_id in server.closed)
        assert server.closed == [call.notification_id]
        return decision

    assert run(loop, scenario()).kind is DecisionKind.DENY


def test_deny_from_a_notification_denies_with_a_message_the_agent_sees(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    async def scenario() -> Decision:
        await desktop.notifier.start()
        answer, call = await _notified(desktop, server, _bash("rm -rf build"))
        assert len(desktop.dialogs.open_dialogs()) == 1
        server.click(call.notification_id, "deny")
        decision = await answer
        # its dialog observes the same approval: it closed, and the person's later
        # answer there is not asked for
        await settle(lambda: desktop.dialogs.open_dialogs() == [])
        return decision

    decision = run(loop, scenario())
    assert decision.kind is DecisionKind.DENY
    assert decision.message == NOTIFICATION_DENY


def test_a_waiting_request_a_new_grant_covers_is_notified_again_and_still_needs_a_press(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    from qoder_desktop.domain.models import DecidedBy, PermissionSuggestion

    grant = PermissionSuggestion.from_wire({"type": "addRules", "behavior": "allow",
                                            "destination": "session", "rules": [
                                                {"toolName": "Bash", "ruleContent": "make"}]})

    async def scenario() -> Decision:
        await desktop.notifier.start()
        seen: list[tuple[str, str]] = []
        desktop.notifier.shown.connect(lambda rid: seen.append(("shown", rid)))
        desktop.notifier.armed.connect(lambda rid: seen.append(("armed", rid)))
        first, sibling = _bash("make"), _bash("make")
        granted, _ = await _notified(desktop, server, first)
        answer, before = await _notified(desktop, server, sibling)
        await settle(lambda: ("armed", sibling.request_id) in seen)
        seen.clear()
        desktop.approvals.decided(first.request_id,  # the person's grant, as from its dialog
                                  Decision.allow_session({"command": "make"}, (grant,)))
        assert (await granted).kind is DecisionKind.ALLOW_SESSION
        await settle(lambda: "new rule" in server.last().body)
        again = server.last()
        assert before.notification_id in server.closed  # replaced, not added beside it
        assert again.body == ("make\nCovered by your new rule Bash(make), but the agent asked "
                              "before it held that rule, so nothing was allowed for you: you "
                              "decide (Ctrl+Return allows this call once).")
        assert again.action_pairs() == APPROVAL_ACTIONS
        # Its "Allow once" armed again only after the arming delay of the new notification.
        await settle(lambda: ("armed", sibling.request_id) in seen)
        assert seen == [("shown", sibling.request_id), ("armed", sibling.request_id)]
        assert not answer.done()  # nothing answered it but the person's press
        server.click(again.notification_id, "allow")
        return await answer

    allowed = run(loop, scenario())
    assert (allowed.kind, allowed.decided_by) == (DecisionKind.ALLOW_ONCE, DecidedBy.USER)


def test_a_withdrawn_request_closes_its_notification(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    async def scenario() -> None:
        await desktop.notifier.start()
        answer, call = await _notified(desktop, server, _bash("sleep 100"))
        assert desktop.broker.withdraw_session("s0") == 1
        await answer
        await settle(lambda: call.notification_id in server.closed)
        # a late click on the closed notification answers nothing and raises nothing
        server.click(call.notification_id, "allow")
        later, other = await _notified(desktop, server, _bash("sleep 200"))
        await _opened_after(desktop, server, other)  # the late click was handled by then
        later.cancel()

    run(loop, scenario())
    entries = desktop.broker._ledger.entries("s0")  # type: ignore[attr-defined]
    assert [entry.outcome for entry in entries] == [DecisionKind.WITHDRAWN] * 2


def test_a_question_offers_answer_never_allow(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    request = _question()

    async def scenario() -> NotifyCall:
        await desktop.notifier.start()
        answer, call = await _notified(desktop, server, request)
        server.click(call.notification_id, "allow")  # not a button here: does nothing
        server.click(call.notification_id, "deny")
        await _opened_after(desktop, server, call)  # both clicks were handled by then
        assert not answer.done()
        answer.cancel()
        return call

    call = run(loop, scenario())
    assert call.summary == "Question from slow"
    assert call.body == "Allow &lt;b&gt;which&lt;/b&gt; layout?"
    assert call.action_pairs() == [("default", ""), ("answer", "Answer…")]


def test_answer_on_a_question_notification_opens_the_question(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop) -> None:
    question = _question()

    async def scenario() -> None:
        await desktop.notifier.start()
        first, _ = await _notified(desktop, server, _bash("make build"))
        answer, call = await _notified(desktop, server, question)
        assert desktop.dialogs.dialog(question.request_id) is None  # one dialog at a time
        server.click(call.notification_id, "answer")
        await settle(lambda: desktop.dialogs.dialog(question.request_id) is not None)
        dialog = desktop.dialogs.dialog(question.request_id)
        assert dialog is not None and dialog.isVisible()
        assert dialog.windowTitle().startswith("Question")
        assert not answer.done()
        answer.cancel()
        first.cancel()

    run(loop, scenario())


@pytest.mark.parametrize("action", ["open", "default"])
def test_open_or_a_click_on_an_approval_notification_opens_that_request(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop,
        action: str) -> None:
    second = _bash("make test")

    async def scenario() -> None:
        await desktop.notifier.start()
        first, _ = await _notified(desktop, server, _bash("make build"))
        answer, call = await _notified(desktop, server, second)
        assert desktop.dialogs.dialog(second.request_id) is None
        server.click(call.notification_id, action)
        await settle(lambda: desktop.dialogs.dialog(second.request_id) is not None)
        assert not answer.done()  # opening answers nothing
        answer.cancel()
        first.cancel()

    run(loop, scenario())


def test_a_server_without_buttons_gets_no_actions_and_a_click_opens_the_request(
        desktop: DesktopApp, bus: str, loop: AppEventLoop) -> None:
    server = NotificationServer(capabilities=("body",))
    run(loop, server.start(bus))
    second = _bash("make test")

    async def scenario() -> NotifyCall:
        status = await desktop.notifier.start()
        assert status.available and not status.buttons
        first, _ = await _notified(desktop, server, _bash("make build"))
        answer, call = await _notified(desktop, server, second)
        server.click(call.notification_id, "allow")  # no such button: does nothing
        await _opened_after(desktop, server, call)  # the click was handled by then
        assert not answer.done()
        answer.cancel()
        first.cancel()
        return call

    try:
        call = run(loop, scenario())
    finally:
        server.stop()
    assert call.action_pairs() == [("default", "")]


def test_without_a_notification_service_the_tray_balloon_announces_it(
        desktop: DesktopApp, bus: str, loop: AppEventLoop) -> None:
    desktop.tray_available = True  # as on a desktop with a tray (offscreen has none)
    request = _bash("npm test")

    async def scenario() -> None:
        status = await desktop.notifier.start()
        assert not status.available
        assert "org.freedesktop.Notifications" in status.detail
        answer = asyncio.ensure_future(desktop.broker.request(request))
        await settle(lambda: desktop.tray.last_notified() == request.request_id)
        answer.cancel()
        await settle(lambda: desktop.tray.last_notified() is None)  # withdrawn: forgotten

    run(loop, scenario())


def test_when_the_session_bus_goes_away_the_tray_balloon_takes_over(
        desktop: DesktopApp, loop: AppEventLoop, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    desktop.tray_available = True  # as on a desktop with a tray (offscreen has none)
    request = _bash("npm test")
    with private_bus(tmp_path / "gone") as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        server = NotificationServer()
        run(loop, server.start(address))
        assert run(loop, desktop.notifier.start()).available
    # the bus is gone (the session ended): nothing is sent into the void

    async def scenario() -> None:
        await settle(lambda: not desktop.notifier.available)
        answer = asyncio.ensure_future(desktop.broker.request(request))
        await settle(lambda: desktop.tray.last_notified() == request.request_id)
        answer.cancel()

    run(loop, scenario())
    server.stop()
    assert len(server.notified) == 0
