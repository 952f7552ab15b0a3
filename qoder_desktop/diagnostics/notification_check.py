"""The self-check's notification line: does the desktop's notification service answer?

Core module: the probe (`qoder_desktop.notifications.probe.probe_service`) talks D-Bus
with jeepney (`notifications.session_bus`), never Qt. Without a service the app
announces requests with the tray balloon; the line says so and what to run.
"""

from __future__ import annotations

from collections.abc import Callable

from qoder_desktop.diagnostics.report import CheckResult, Status
from qoder_desktop.notifications.probe import ProbeResult

NotificationProbe = Callable[[], ProbeResult]
"""Looks for the notification service; the entry point gives `notifications.probe.probe_service`."""

_NO_NOTIFICATIONS_ADVICE = (
    "new requests are announced with the tray balloon instead, without buttons; for "
    "notifications with Allow once/Deny buttons run your desktop's notification service "
    "(GNOME Shell, KDE Plasma, xfce4-notifyd, dunst or mako) in this session")


def check_notifications(probe: NotificationProbe | None = None) -> CheckResult:
    """Whether the desktop's notification service answers, and shows buttons."""
    if probe is None:
        return CheckResult("notification", Status.WARN, "the notification probe was not run",
                           "run `qoder-desktop --self-check`, which brings the probe")
    found = probe()
    if not found.available:
        return CheckResult("notification", Status.WARN,
                           f"no notification service ({found.detail})", _NO_NOTIFICATIONS_ADVICE)
    if not found.buttons:
        return CheckResult("notification", Status.WARN, f"{found.detail}: no action buttons",
                           "notifications show each request and open it when clicked; "
                           "answer in its dialog")
    return CheckResult("notification", Status.OK, f"{found.detail}, with action buttons")
