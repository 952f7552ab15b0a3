"""The desktop-notifier backend and the choice of backend: Linux gets the freedesktop one;
`DesktopNotifications` says why it is not available when its notifier cannot be made or
finds no service, and, on a real private session bus with a notification server, shows
notifications and hands a press to the caller, on the app's loop."""

from __future__ import annotations

import sys
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

from qoder_desktop.notifications.desktop import DesktopNotifications, open_service
from qoder_desktop.notifications.freedesktop import FreedesktopNotifications
from qoder_desktop.notifications.service import NoteAction, NoteSpec
from qoder_desktop.ui.event_loop import AppEventLoop

T = TypeVar("T")
ALLOW = NoteAction("allow", "Allow once")
needs_dbus = pytest.mark.skipif(dbus_daemon() is None,
                                reason="needs dbus-daemon (Debian: dbus; see .ci/run)")


def run(loop: AppEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    return run_on_loop(loop, coroutine, timeout=15)


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[AppEventLoop]:
    """The app's loop on the test's QApplication."""
    yield from app_loop(qapp)


def note(key: str) -> NoteSpec:
    return NoteSpec(key=key, title="Bash wants to run", body="npm run test", actions=(ALLOW,))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux choice")
def test_linux_gets_the_freedesktop_backend_not_yet_started() -> None:
    """On Linux the D-Bus backend is used (it checks who sends a press); it starts later."""
    service = open_service("Qoder Desktop", lambda *_: None, lambda _key: None)
    assert isinstance(service, FreedesktopNotifications)
    assert not service.available


def test_a_notifier_that_cannot_be_made_means_no_service_and_says_why(
        loop: AppEventLoop) -> None:
    """`start()` never raises: callers fall back to the tray, and the reason is kept."""
    def no_notifier(app_name: str) -> Any:
        raise OSError(f"no notification centre for {app_name}")

    service = DesktopNotifications("Qoder Desktop", lambda *_: None, factory=no_notifier)
    status = run(loop, service.start(timeout=5))

    assert not status.available and not service.available
    assert status.detail == "OSError: no notification centre for Qoder Desktop"
    assert not run(loop, service.show(note("r1")))


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ExitStack]:
    """A private session bus for the test (closing the stack ends the bus daemon)."""
    with ExitStack() as stack:
        address = stack.enter_context(private_bus(tmp_path / "bus"))
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        stack.address = address  # type: ignore[attr-defined]
        yield stack


@needs_dbus
def test_a_bus_without_a_notification_service_is_no_service(
        loop: AppEventLoop, bus: ExitStack) -> None:
    """desktop-notifier's own notifier finds nobody to talk to: not available, and why."""
    service = DesktopNotifications("Qoder Desktop", lambda *_: None)
    status = run(loop, service.start(timeout=5))
    assert not status.available
    assert status.detail


@needs_dbus
def test_the_real_notifier_shows_a_note_and_hands_a_press_to_the_caller(
        loop: AppEventLoop, bus: ExitStack) -> None:
    """With a notification server on the bus, the note is shown with its button, and
    pressing it calls back with the note's key and the button's key."""
    server = NotificationServer(("actions", "body"))
    run(loop, server.start(bus.address))  # type: ignore[attr-defined]
    bus.callback(server.stop)
    pressed: list[tuple[str, str]] = []
    service = DesktopNotifications("Qoder Desktop", lambda *args: pressed.append(args))

    status = run(loop, service.start(timeout=5))
    assert status.available and status.buttons
    assert run(loop, service.show(note("r1")))
    shown = server.notified[-1]
    assert shown.summary == "Bash wants to run"

    server.click(shown.notification_id, "allow")
    run(loop, settle_on_loop(lambda: pressed == [("r1", "allow")], timeout=10.0))
    run(loop, service.stop())
