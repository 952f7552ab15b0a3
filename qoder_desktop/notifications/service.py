"""What both notification backends share: the plain data a notification carries, the
interface `RequestNotifier` uses, and `BusService`, the life cycle both backends run
(start → found or not, the open notifications, stop, and falling back when the session
bus goes away). `desktop.DesktopNotifications` (desktop-notifier) and
`freedesktop.FreedesktopNotifications` (D-Bus through jeepney) add only how they talk
to their service.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

DEFAULT_ACTION = "default"
"""The action key of a click on the notification's body."""
START_TIMEOUT = 5.0
"""Seconds the service gets to say what it can do."""
CALL_TIMEOUT = 5.0
"""Seconds a Notify or CloseNotification call gets."""


@dataclass(frozen=True)
class NoteAction:
    """One button of a notification: the key reported back and its label."""

    key: str
    label: str


@dataclass(frozen=True)
class NoteSpec:
    """What one notification shows.

    Attributes:
        key: the caller's id for it (a request id); actions are reported with it.
        title: the summary line (plain text).
        body: the body, already safe for the server (see `ui.plain_text.notification_text`).
        actions: the buttons, in order.
    """

    key: str
    title: str
    body: str
    actions: tuple[NoteAction, ...] = ()


@dataclass(frozen=True)
class ServiceStatus:
    """What `start()` found.

    Attributes:
        available: a notification service answered.
        buttons: it shows action buttons (the ``actions`` capability).
        detail: what was found, or why there is none (for logs and the status line).
    """

    available: bool
    buttons: bool = False
    detail: str = ""


class NotificationService(Protocol):
    """What `RequestNotifier` needs from a notification backend."""

    replaced: bool
    """True once the service changed hands in this run (then "Allow once" is not offered:
    whoever owns it now may be a stand-in)."""

    @property
    def available(self) -> bool:
        """True once `start()` found a notification service."""

    async def start(self, timeout: float = START_TIMEOUT) -> ServiceStatus:
        """Connect and ask the service what it can do; never raises."""

    async def show(self, spec: NoteSpec) -> bool:
        """Show `spec`; False when the service did not take it."""

    def is_shown(self, key: str) -> bool:
        """True while the notification for `key` is up."""

    async def close(self, key: str) -> None:
        """Close the notification for `key`; never raises."""

    async def stop(self) -> None:
        """Close every notification and disconnect."""


class BusService:
    """The life cycle both backends share; a backend adds how it shows and closes one
    notification, and how it lets go of its connection.

    Args:
        app_name: the name the service shows as the sender.
        on_action: called with (key, action key) for a press the backend accepted.
    """

    def __init__(self, app_name: str, on_action: Callable[[str, str], None]) -> None:
        self._app_name = app_name
        self._on_action = on_action
        self._status = ServiceStatus(False, detail="not started")
        self.replaced = False
        """True once the service changed hands in this run (see `NotificationService`)."""
        self._shown: dict[str, Any] = {}
        """The open notifications of this app, by key (what each holds is the backend's)."""
        self._watcher: asyncio.Task[None] | None = None

    @property
    def available(self) -> bool:
        """True once `start()` found a notification service."""
        return self._status.available

    @property
    def status(self) -> ServiceStatus:
        """What `start()` found (``not started`` before it ran)."""
        return self._status

    def is_shown(self, key: str) -> bool:
        """True while the notification for `key` is up (shown, not closed or clicked)."""
        return key in self._shown

    async def close(self, key: str) -> None:
        """Close the notification for `key`; never raises (the backend's own way)."""
        raise NotImplementedError

    async def close_all(self) -> None:
        """Close every notification this app shows (the app is quitting)."""
        for key in list(self._shown):
            await self.close(key)

    async def stop(self) -> None:
        """Close every notification and leave the bus."""
        await self.close_all()
        bus = self._release()
        self._status = ServiceStatus(False, detail="stopped")
        disconnect(bus)
        if self._watcher is not None:
            await asyncio.gather(self._watcher, return_exceptions=True)

    def _start_failed(self, exc: Exception, bus: Any) -> ServiceStatus:
        """`start()` found no usable service: leave `bus` and say why (then callers fall
        back to the tray balloon)."""
        disconnect(bus)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        self._status = ServiceStatus(False, detail=detail)
        log.info("no desktop notification service (%s)", detail)
        return self._status

    def _started(self, bus: Any, buttons: bool, found: str = "") -> ServiceStatus:
        """`start()` found a service: watch `bus` (if any) and record what it can do."""
        if bus is not None:
            self._watcher = asyncio.ensure_future(self._watch(bus))
        self._status = ServiceStatus(True, buttons, "buttons" if buttons else "no buttons")
        log.info("desktop notification service found (%s%s)", self._status.detail, found)
        return self._status

    def _release(self) -> Any:
        """Forget the connection (nothing is shown after this); returns its bus, if any."""
        raise NotImplementedError

    def _bus_lost(self, bus: Any, reason: str) -> None:
        """The session bus `bus` went away: fall back from then on (the backend's part)."""
        raise NotImplementedError

    async def _watch(self, bus: Any) -> None:
        """When the bus goes away (the session ends), fall back from then on."""
        try:
            await bus.wait_for_disconnect()
            reason = "the session bus closed the connection"
        except Exception as exc:
            reason = f"the session bus went away ({type(exc).__name__})"
        self._bus_lost(bus, reason)


def disconnect(bus: Any) -> None:
    """Leave the session bus `bus` (None: nothing to leave); never raises."""
    if bus is not None:
        try:
            bus.disconnect()
        except Exception as exc:  # already gone
            log.debug("leaving the session bus: %s", exc)
