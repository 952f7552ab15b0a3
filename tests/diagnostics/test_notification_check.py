"""The self-check's notification line, against a private session bus for real."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.notification_server import ServerThread, dbus_daemon, private_bus

from qoder_desktop.diagnostics.notification_check import check_notifications
from qoder_desktop.diagnostics.report import Status
from qoder_desktop.notifications.probe import probe_service

pytestmark = pytest.mark.skipif(dbus_daemon() is None,
                                reason="needs dbus-daemon (Debian: dbus; see .ci/run)")


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with private_bus(tmp_path / "bus") as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address


@pytest.fixture
def serving(bus: str) -> Iterator[ServerThread]:
    thread = ServerThread(bus, ("actions", "body"))
    yield thread
    thread.stop()


def test_a_notification_service_with_buttons_is_ok(serving: ServerThread) -> None:
    result = check_notifications(probe_service)
    assert result.status is Status.OK, result.line()
    assert "test-notifications 1.0 (qoder-tests), with action buttons" in result.line()


def test_a_service_without_buttons_warns_that_requests_are_answered_in_dialogs(
        bus: str) -> None:
    thread = ServerThread(bus, ("body",))
    try:
        result = check_notifications(probe_service)
    finally:
        thread.stop()
    assert result.status is Status.WARN
    assert "no action buttons" in result.found and "dialog" in result.advice


def test_no_notification_service_warns_and_names_the_tray_balloon_fallback(bus: str) -> None:
    result = check_notifications(probe_service)
    assert result.status is Status.WARN
    assert "no notification service" in result.found
    assert "org.freedesktop.Notifications" in result.found
    assert "tray balloon" in result.advice and "dunst" in result.advice


def test_no_session_bus_at_all_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    result = check_notifications(probe_service)
    assert result.status is Status.WARN
    assert "no D-Bus session bus" in result.found
    assert "tray balloon" in result.advice
