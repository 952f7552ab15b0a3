"""The notification life cycle both backends share (`BusService`), run by the freedesktop
backend against a real notification server on a private D-Bus session bus, on the app's
loop: start finds the service (or says why not), the open notifications are known until
closed or clicked, stop closes them all, and a bus that goes away means falling back."""

from __future__ import annotations

from collections.abc import Coroutine, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.loop import app_loop
from helpers.loop import run as run_on_loop
from helpers.loop import settle as settle_on_loop
from helpers.notification_server import NotificationServer, dbus_daemon, private_bus
from PySide6.QtWidgets import QApplication

from qoder_desktop.notifications.freedesktop import FreedesktopNotifications
from qoder_desktop.notifications.service import NoteAction, NoteSpec, ServiceStatus
from qoder_desktop.ui.event_loop import AppEventLoop

pytestmark = pytest.mark.skipif(dbus_daemon() is None,
                                reason="needs dbus-daemon (Debian: dbus; see .ci/run)")

T = TypeVar("T")
ALLOW = NoteAction("allow", "Allow once")


def run(loop: AppEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    return run_on_loop(loop, coroutine, timeout=15)


async def settle(condition: Any) -> None:
    await settle_on_loop(condition, timeout=10.0)


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[AppEventLoop]:
    """The app's loop on the test's QApplication, for tests that drive it by hand."""
    yield from app_loop(qapp)


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ExitStack]:
    """A private session bus for the test (closing the stack ends the bus daemon)."""
    with ExitStack() as stack:
        address = stack.enter_context(private_bus(tmp_path / "bus"))
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        stack.address = address  # type: ignore[attr-defined]
        yield stack


def server_on(loop: AppEventLoop, bus: ExitStack,
              capabilities: tuple[str, ...] = ("actions", "body")) -> NotificationServer:
    server = NotificationServer(capabilities)
    run(loop, server.start(bus.address))  # type: ignore[attr-defined]
    bus.callback(server.stop)
    return server


def note(key: str) -> NoteSpec:
    return NoteSpec(key=key, title="Bash wants to run", body="npm run test", actions=(ALLOW,))


def test_before_start_nothing_is_available(loop: AppEventLoop) -> None:
    service = FreedesktopNotifications("Qoder Desktop", lambda *_: None)
    assert not service.available
    assert service.status == ServiceStatus(False, detail="not started")
    assert not run(loop, service.show(note("r1")))


def test_without_a_session_bus_start_says_why_and_never_raises(
        loop: AppEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    service = FreedesktopNotifications("Qoder Desktop", lambda *_: None)
    status = run(loop, service.start(timeout=5))
    assert not status.available and not service.available
    assert status.detail  # the reason, for the log and the status line


def test_a_bus_without_a_notification_service_is_no_service(
        loop: AppEventLoop, bus: ExitStack) -> None:
    service = FreedesktopNotifications("Qoder Desktop", lambda *_: None)
    status = run(loop, service.start(timeout=5))
    assert not status.available
    assert "no service named org.freedesktop.Notifications" in status.detail


def test_a_service_without_buttons_is_found_as_such(loop: AppEventLoop, bus: ExitStack) -> None:
    server_on(loop, bus, capabilities=("body",))
    service = FreedesktopNotifications("Qoder Desktop", lambda *_: None)
    assert run(loop, service.start()) == ServiceStatus(True, False, "no buttons")
    run(loop, service.stop())


def test_open_notifications_are_known_until_clicked_or_stopped(
        loop: AppEventLoop, bus: ExitStack) -> None:
    server = server_on(loop, bus)
    pressed: list[tuple[str, str]] = []
    service = FreedesktopNotifications("Qoder Desktop", lambda *args: pressed.append(args))
    assert run(loop, service.start()) == ServiceStatus(True, True, "buttons")
    assert run(loop, service.show(note("r1"))) and run(loop, service.show(note("r2")))
    assert service.is_shown("r1") and service.is_shown("r2")
    first, second = server.notified[-2:]

    server.click(first.notification_id, "allow")
    run(loop, settle(lambda: pressed == [("r1", "allow")]))
    assert not service.is_shown("r1") and service.is_shown("r2")

    run(loop, service.stop())
    assert not service.is_shown("r2")
    assert server.closed == [second.notification_id]
    assert service.status == ServiceStatus(False, detail="stopped")
    assert not run(loop, service.show(note("r3")))


def test_when_the_session_bus_goes_away_the_service_falls_back(
        loop: AppEventLoop, bus: ExitStack) -> None:
    server_on(loop, bus)
    gone: list[str] = []
    service = FreedesktopNotifications("Qoder Desktop", lambda *_: None, on_gone=gone.append)
    run(loop, service.start())
    assert run(loop, service.show(note("r1")))
    bus.close()  # the session ends: the server leaves and the bus daemon stops
    run(loop, settle(lambda: not service.available))
    assert service.status.detail.startswith("the session bus")
    assert gone == ["r1"] and not service.is_shown("r1")
    run(loop, service.stop())
