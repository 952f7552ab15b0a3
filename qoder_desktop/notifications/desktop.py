"""The desktop's notification service on the app's loop (`open_service` picks the backend).

On Linux that is `freedesktop.FreedesktopNotifications` (D-Bus through jeepney, which
checks who sends a press); elsewhere `DesktopNotifications`, through `desktop-notifier`
(the macOS and Windows notification centres, owned by the OS).

A notification carries plain data only: a title, a body (already made safe for the
server by the caller) and action buttons, each a key and a label. When the person
presses a button (the freedesktop ``ActionInvoked`` signal) or clicks the body (the
``default`` action), `on_action(key, action)` runs on the event loop; the caller decides
what it means. Nothing here answers a request.

`start()` asks the service what it can do; while it has not answered, or when there is
no service, `available` is False and callers fall back (the tray balloon). `show()`
returns False when the service did not take the notification, so a caller can fall back
for that one too. `desktop-notifier` logs and swallows send errors; success is read from
its list of current notifications.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from qoder_desktop.notifications.service import (
    CALL_TIMEOUT,
    DEFAULT_ACTION,
    START_TIMEOUT,
    BusService,
    NoteSpec,
    NotificationService,
    ServiceStatus,
)

log = logging.getLogger(__name__)

NotifierFactory = Callable[[str], Any]
"""Builds the `desktop_notifier.DesktopNotifier` for an app name (tests may swap it)."""


def open_service(app_name: str, on_action: Callable[[str, str], None],
                 on_gone: Callable[[str], None]) -> NotificationService:
    """The backend for this platform (not started).

    Args:
        app_name: the name the service shows as the sender.
        on_action: called with (key, action key) when the person presses a button or
            clicks the body of a shown notification.
        on_gone: called with a key whose notification went away unanswered (the
            freedesktop backend: closed by its server, or the server was replaced).
    """
    if sys.platform.startswith("linux"):
        from qoder_desktop.notifications.freedesktop import FreedesktopNotifications

        return FreedesktopNotifications(app_name, on_action, on_gone)
    return DesktopNotifications(app_name, on_action)


def _bus_of(notifier: Any) -> Any:
    """The dbus-fast `MessageBus` desktop-notifier opened, if any (6.2: `_backend.bus`)."""
    return getattr(getattr(notifier, "_backend", None), "bus", None)


def _default_factory(app_name: str) -> Any:
    from desktop_notifier import DesktopNotifier

    return DesktopNotifier(app_name=app_name, app_icon=None)


@dataclass
class _Shown:
    notification_id: str
    actions: dict[str, str] = field(default_factory=dict)


class DesktopNotifications(BusService):
    """Shows, and closes, notifications with buttons through `desktop-notifier` (macOS,
    Windows: notification centres the OS owns; Linux uses `freedesktop`).

    Args:
        app_name: the name the service shows as the sender.
        on_action: called with (key, action key) when a button or the body is clicked.
        factory: builds the `DesktopNotifier` (the real one by default).
    """

    def __init__(self, app_name: str, on_action: Callable[[str, str], None], *,
                 factory: NotifierFactory = _default_factory) -> None:
        super().__init__(app_name, on_action)
        self._factory = factory
        self._notifier: Any = None
        # `replaced` is never set here: desktop-notifier does not tell when the service
        # changes hands.
        self._shown: dict[str, _Shown] = {}

    async def start(self, timeout: float = START_TIMEOUT) -> ServiceStatus:
        """Connect to the service and ask what it can do; never raises."""
        notifier: Any = None
        try:
            from desktop_notifier import Capability

            notifier = self._factory(self._app_name)
            if type(getattr(notifier, "_backend", None)).__name__ == "DummyNotificationCenter":
                raise RuntimeError("desktop-notifier has no backend here (on macOS it "
                                   "needs the signed app bundle)")
            capabilities = await asyncio.wait_for(notifier.get_capabilities(), timeout)
        except Exception as exc:  # no bus, no service, a broken service: fall back
            return self._start_failed(exc, _bus_of(notifier))
        self._notifier = notifier
        return self._started(_bus_of(notifier), Capability.BUTTONS in capabilities)

    async def show(self, spec: NoteSpec) -> bool:
        """Show `spec` (replacing an earlier one with its key); False when it failed."""
        from desktop_notifier import Button, Notification

        if self._notifier is None:
            return False
        await self.close(spec.key)
        buttons = tuple(
            Button(title=action.label, identifier=action.key,
                   on_pressed=functools.partial(self._action, spec.key, action.key))
            for action in spec.actions) if self._status.buttons else ()
        note = Notification(title=spec.title, message=spec.body, buttons=buttons,
                            on_clicked=functools.partial(self._action, spec.key, DEFAULT_ACTION))
        try:
            await asyncio.wait_for(self._notifier.send_notification(note), CALL_TIMEOUT)
            current = await self._notifier.get_current_notifications()
        except Exception as exc:
            log.warning("the notification service did not take a notification: %s", exc)
            return False
        if note.identifier not in current:  # desktop-notifier logged why
            return False
        self._shown[spec.key] = _Shown(note.identifier,
                                       {action.key: action.label for action in spec.actions})
        return True

    async def close(self, key: str) -> None:
        """Close the notification for `key` (``CloseNotification``); never raises."""
        shown = self._shown.pop(key, None)
        if shown is None or self._notifier is None:
            return
        try:
            await asyncio.wait_for(self._notifier.clear(shown.notification_id), CALL_TIMEOUT)
        except KeyError:
            pass  # desktop-notifier forgot it already: the server closed it on a click
        except Exception as exc:
            log.warning("could not close a notification: %s", exc)

    def _release(self) -> Any:
        notifier, self._notifier = self._notifier, None
        return _bus_of(notifier)

    def _bus_lost(self, bus: Any, reason: str) -> None:
        if self._notifier is not None:
            log.info("desktop notifications stopped: %s", reason)
            self._notifier = None
            self._status = ServiceStatus(False, detail=reason)
            self._shown.clear()

    def _action(self, key: str, action: str) -> None:
        if self._shown.pop(key, None) is None:
            return  # closed already: a late click does nothing
        try:
            self._on_action(key, action)
        except Exception:  # a callback error must not kill the D-Bus reader
            log.exception("handling the notification action %r failed", action)
