"""A notification's buttons answer only from the server that showed it: a same-user
process that takes ``org.freedesktop.Notifications`` over (another process on a private
session bus) cannot press "Allow once", nor can the replaced server; a notification the
new server shows works. On the app's qasync loop, through the whole desktop wiring."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import logging
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.loop import run as run_on_loop
from helpers.loop import settle as settle_on_loop
from helpers.notification_server import NotificationServer, StandIn, dbus_daemon, private_bus
from pytestqt.qtbot import QtBot

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import NotificationSettings, Settings
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    SessionInfo,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp

pytestmark = pytest.mark.skipif(dbus_daemon() is None,
                                reason="needs dbus-daemon (Debian: dbus; see .ci/run)")

T = TypeVar("T")
IGNORED = "ignored the action"
"""What the log says when a press from the wrong sender is dropped."""


def run(loop: AppEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    """`helpers.loop.run` with room for D-Bus round trips and a process start (30 s)."""
    return run_on_loop(loop, coroutine, timeout=30)


async def settle(condition: Any) -> None:
    """`helpers.loop.settle` with room for a D-Bus round trip (15 s)."""
    await settle_on_loop(condition, timeout=15.0)


@pytest.fixture
def desktop(db: Database, loop: AppEventLoop, qtbot: QtBot,
            tmp_path: Path) -> Iterator[DesktopApp]:
    """The whole desktop wiring, notifications on even while the window is active."""
    db.upsert_session(SessionInfo(session_id="s0", name="slow", backend=Backend.CLAUDE,
                                  cwd=str(tmp_path)))
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)

    def no_sessions(*_args: Any) -> Any:
        raise AssertionError("these tests start no agent")

    settings = Settings(notifications=NotificationSettings(only_when_inactive=False))
    app = DesktopApp(broker, SessionHub(db, ledger, broker, no_sessions), SecretStore(),
                     settings, tmp_path / "settings.json")
    app.notifier.arming_delay_ms = 10  # armed at once: a press from the right server acts
    qtbot.addWidget(app.window)
    yield app
    app.dialogs.close_all()
    app.bridge.unsubscribe()
    app.tray.dispose()
    run(loop, app.notifier.close_all())


def _bash(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="slow", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp")


async def _armed(desktop: DesktopApp, request: ApprovalRequest) -> asyncio.Future[Decision]:
    """Ask the broker for `request`; return once its notification's Allow once acts."""
    armed: list[str] = []
    desktop.notifier.armed.connect(armed.append)
    answer = asyncio.ensure_future(desktop.broker.request(request))
    await settle(lambda: request.request_id in armed)
    desktop.notifier.armed.disconnect(armed.append)
    return answer


def _ignored(caplog: pytest.LogCaptureFixture) -> int:
    return sum(IGNORED in record.getMessage() for record in caplog.records)


def test_a_process_that_takes_the_service_over_cannot_allow_now_or_later(
        desktop: DesktopApp, server: NotificationServer, bus: str, loop: AppEventLoop,
        caplog: pytest.LogCaptureFixture) -> None:
    """A stand-in that took the name cannot press Allow once on what the real server
    showed, and new notifications (which it shows) offer no Allow once for it to press:
    the person answers in the dialog."""
    caplog.set_level(logging.DEBUG, logger="qoder_desktop.notifications")
    first, second = _bash("make build"), _bash("make test")
    stand_ins: list[StandIn] = []

    async def scenario() -> None:
        assert (await desktop.notifier.start()).buttons
        answer = await _armed(desktop, first)
        shown = server.last().notification_id
        assert desktop.notifier.is_showing(first.request_id)
        assert "allow" in server.last().actions  # the real server offered it

        stand_in = StandIn(bus)  # (only now: it takes the name as soon as it runs)
        stand_ins.append(stand_in)

        await settle(lambda: stand_in.ready)  # the stand-in now owns the name
        await settle(lambda: not desktop.notifier.is_showing(first.request_id))
        for notification_id in range(shown, shown + 3):  # it guesses ids
            stand_in.click(notification_id, "allow")
        await settle(lambda: _ignored(caplog) == 3)
        server.click(shown, "allow")  # the replaced server, still on the bus
        await settle(lambda: _ignored(caplog) == 4)
        assert not answer.done()
        assert desktop.broker.is_pending(first.request_id)
        [dialog] = desktop.dialogs.open_dialogs()
        assert dialog.request.request_id == first.request_id  # the dialog stays

        later = await _armed(desktop, second)  # shown by the new owner, without Allow once
        assert [summary for _, summary in stand_in.notified] == [
            "Bash in slow wants approval"]
        stand_in.click(stand_in.notified[-1][0], "allow")
        await settle(lambda: "it was not offered" in caplog.text)
        assert not later.done() and not answer.done()
        assert desktop.broker.is_pending(second.request_id)
        answer.cancel()
        later.cancel()

    try:
        run(loop, scenario())
    finally:
        for stand_in in stand_ins:
            stand_in.stop()
    assert "notifications offer no Allow once" in caplog.text
    assert len(server.notified) == 1  # the replaced server got nothing new
    outcomes = [entry.outcome for entry in desktop.broker._ledger.entries("s0")]  # type: ignore[attr-defined]
    assert DecisionKind.ALLOW_ONCE not in outcomes


def test_a_press_from_a_process_that_does_not_own_the_service_is_ignored(
        desktop: DesktopApp, server: NotificationServer, bus: str, loop: AppEventLoop,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qoder_desktop.notifications")
    forger = NotificationServer()  # same interface and path, but not the name's owner
    run(loop, forger.start(bus, own=False))

    async def scenario() -> Decision:
        await desktop.notifier.start()
        answer = await _armed(desktop, _bash("make build"))
        shown = server.last().notification_id
        forger.click(shown, "allow")
        forger.dismiss(shown)  # nor can it make the notification count as gone
        await settle(lambda: _ignored(caplog) == 1 and any(
            "ignored NotificationClosed" in record.getMessage() for record in caplog.records))
        assert not answer.done()
        [pending] = desktop.broker.pending()
        assert desktop.notifier.is_showing(pending.request_id)  # still the person's to press
        server.click(shown, "allow")  # the person, on the server that showed it
        return await answer

    try:
        decision = run(loop, scenario())
    finally:
        forger.stop()
    assert decision.kind is DecisionKind.ALLOW_ONCE
    assert decision.decided_by is DecidedBy.USER


def test_a_notification_its_server_closed_is_gone_and_its_request_waits(
        desktop: DesktopApp, server: NotificationServer, loop: AppEventLoop,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qoder_desktop.notifications")
    request = _bash("make build")

    async def scenario() -> None:
        await desktop.notifier.start()
        gone: list[str] = []
        desktop.notifier.gone.connect(gone.append)
        answer = await _armed(desktop, request)
        server.dismiss(server.last().notification_id)  # the person swiped it away
        await settle(lambda: gone == [request.request_id])
        assert not desktop.notifier.is_showing(request.request_id)
        server.click(server.last().notification_id, "allow")  # a late press: nothing
        await settle(lambda: _ignored(caplog) == 1)
        assert not answer.done() and desktop.broker.is_pending(request.request_id)
        [dialog] = desktop.dialogs.open_dialogs()
        assert dialog.request.request_id == request.request_id
        answer.cancel()

    run(loop, scenario())


def test_a_notification_service_the_bus_starts_on_demand_is_found_and_shows(
        desktop: DesktopApp, loop: AppEventLoop, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    with private_bus(tmp_path / "activating", activates=True) as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)

        async def scenario() -> None:
            status = await desktop.notifier.start()  # nothing owns the name yet
            assert status.available and status.buttons, status.detail
            answer = await _armed(desktop, _bash("make build"))
            answer.cancel()

        run(loop, scenario())
