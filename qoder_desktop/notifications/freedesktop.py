"""The freedesktop notification service on the session bus, through our own small
client (`session_bus.SessionBus`, on jeepney).

Any process of the same user can take the well-known name
``org.freedesktop.Notifications`` (end the desktop's server and claim the name, or ask
for it with ``REPLACE_EXISTING``) and then emit ``ActionInvoked(id, "allow")``. So a
notification remembers the *unique* bus name (``:1.42``) of the server that answered its
``Notify`` (the reply's sender; the bus daemon stamps it, nobody can forge it), and:

- ``ActionInvoked`` / ``NotificationClosed`` count only from that unique name, while it
  still owns the well-known name, and only for an action the notification offered;
  anything else is logged and ignored.
- ``NameOwnerChanged`` for the well-known name ends every open notification: each is
  reported gone (`on_gone`), nothing is answered, and later notifications go to the new
  owner (a server restart keeps working for new notifications).

`desktop-notifier` hides both senders (its proxy forwards any signal from whoever owns
the name now), which is why this backend talks D-Bus itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from qoder_desktop.notifications.probe import BUS_NAME, OBJECT_PATH
from qoder_desktop.notifications.service import (
    CALL_TIMEOUT,
    DEFAULT_ACTION,
    START_TIMEOUT,
    BusService,
    NoteSpec,
    ServiceStatus,
)
from qoder_desktop.notifications.session_bus import (
    DBUS_NAME,
    DBUS_PATH,
    BusError,
    BusMessage,
    SessionBus,
)

log = logging.getLogger(__name__)

_SIGNALS_RULE = f"type='signal',interface='{BUS_NAME}',path='{OBJECT_PATH}'"
"""Every notification signal, whoever sends it: the sender is checked here, and logged."""
_OWNER_RULE = (f"type='signal',sender='{DBUS_NAME}',interface='{DBUS_NAME}',"
               f"member='NameOwnerChanged',arg0='{BUS_NAME}'")
_NO_DEFAULT_ACTION = frozenset({"Xfce Notify Daemon"})
"""Servers that do not support the ``default`` action (a click on the body)."""


@dataclass(frozen=True)
class _Shown:
    owner: str
    """The unique bus name of the server that answered ``Notify``."""
    notification_id: int
    actions: frozenset[str]
    """The action keys this notification offered."""


class FreedesktopNotifications(BusService):
    """Shows notifications and reports presses only from the server that showed them.

    The same interface as `desktop.DesktopNotifications` (see there), plus `on_gone`.

    Args:
        app_name: the name the service shows as the sender.
        on_action: called with (key, action key) for a press from the right server.
        on_gone: called with a key whose notification is gone without an answer (the
            server closed it, the service changed owner, or the bus went away).
    """

    def __init__(self, app_name: str, on_action: Callable[[str, str], None],
                 on_gone: Callable[[str], None] | None = None) -> None:
        super().__init__(app_name, on_action)
        # `replaced` turns True once the service changed hands in this run (its owner
        # left or was replaced): whoever owns it now may be a stand-in, so no
        # notification offers "Allow once".
        self._on_gone = on_gone
        self._bus: SessionBus | None = None
        self._owner = ""
        self._default_action = True
        self._shown: dict[str, _Shown] = {}

    @property
    def owner(self) -> str:
        """The unique bus name that owns the notification service now ("" for none)."""
        return self._owner

    async def start(self, timeout: float = START_TIMEOUT) -> ServiceStatus:
        """Connect to the session bus and ask the service what it can do; never raises."""
        bus: SessionBus | None = None
        try:
            bus = SessionBus(self._on_message)
            await asyncio.wait_for(bus.connect(), timeout)
            capabilities = await asyncio.wait_for(self._introduce(bus), timeout)
        except Exception as exc:  # no bus, no service, a broken service: fall back
            return self._start_failed(exc, bus)
        self._bus = bus
        return self._started(bus, "actions" in capabilities, f", owner {self._owner}")

    async def _introduce(self, bus: Any) -> list[str]:
        """Watch the name and the signals, learn the owner, then ask what it can do."""
        for rule in (_OWNER_RULE, _SIGNALS_RULE):
            await _call(bus, "AddMatch", "s", [rule], destination=DBUS_NAME, path=DBUS_PATH,
                        interface=DBUS_NAME)
        try:  # by its well-known name, which also starts a service the bus activates
            info = await _call(bus, "GetServerInformation")
            owner = await _call(bus, "GetNameOwner", "s", [BUS_NAME], destination=DBUS_NAME,
                                path=DBUS_PATH, interface=DBUS_NAME)
        except BusError as exc:
            raise BusError(f"no service named {BUS_NAME} ({exc})", exc.error_name) from None
        # The daemon sends us its messages in order: a change of owner after this answer
        # reaches `_on_message` after it, so the owner stays current.
        self._owner = str(owner.body[0])
        self._default_action = str(info.body[0]) not in _NO_DEFAULT_ACTION
        capabilities = await _call(bus, "GetCapabilities")
        return [str(capability) for capability in capabilities.body[0]]

    async def show(self, spec: NoteSpec) -> bool:
        """Show `spec` (replacing an earlier one with its key); False when it failed."""
        if self._bus is None:
            return False
        await self.close(spec.key)
        actions = [DEFAULT_ACTION, ""] if self._default_action else []
        if self._status.buttons:
            for action in spec.actions:
                actions += [action.key, action.label]
        try:
            reply = await asyncio.wait_for(_call(
                self._bus, "Notify", "susssasa{sv}i",
                [self._app_name, 0, "", spec.title, spec.body, actions,
                 {"urgency": ("y", 1)}, -1]), CALL_TIMEOUT)
        except Exception as exc:
            log.warning("the notification service did not take a notification: %s", exc)
            return False
        owner, notification_id = str(reply.sender), int(reply.body[0])
        shown = _Shown(owner, notification_id, frozenset(actions[::2]))
        if self._bus is None or owner != self._owner:
            # The service changed hands while it was asked: this one would never answer.
            log.warning("a notification was answered by %s, which no longer owns %s; "
                        "it is closed again", owner, BUS_NAME)
            await self._close_shown(shown)
            return False
        self._shown[spec.key] = shown
        return True

    async def close(self, key: str) -> None:
        """Close the notification for `key` (``CloseNotification``); never raises."""
        shown = self._shown.pop(key, None)
        if shown is not None:
            await self._close_shown(shown)

    async def _close_shown(self, shown: _Shown) -> None:
        if self._bus is None:
            return
        try:  # to the server that showed it (a successor does not know the id)
            await asyncio.wait_for(_call(self._bus, "CloseNotification", "u",
                                         [shown.notification_id], destination=shown.owner),
                                   CALL_TIMEOUT)
        except Exception as exc:  # closed already, or that server is gone
            log.debug("could not close a notification: %s", exc)

    def _release(self) -> Any:
        bus, self._bus = self._bus, None
        return bus

    # -- signals -----------------------------------------------------------------------

    def _on_message(self, message: BusMessage) -> None:
        """Every signal the bus connection receives, in order."""
        try:
            if (message.interface == DBUS_NAME and message.member == "NameOwnerChanged"
                    and message.sender == DBUS_NAME and message.signature == "sss"
                    and message.body[0] == BUS_NAME):
                self._owner_changed(str(message.body[1]), str(message.body[2]))
            elif message.interface == BUS_NAME and message.path == OBJECT_PATH:
                if message.member == "ActionInvoked" and message.signature == "us":
                    self._action(str(message.sender), int(message.body[0]),
                                 str(message.body[1]))
                elif message.member == "NotificationClosed" and message.signature == "uu":
                    self._closed(str(message.sender), int(message.body[0]))
        except Exception:  # a callback error must not kill the D-Bus reader
            log.exception("handling a notification signal failed")

    def _key_of(self, sender: str, notification_id: int) -> str | None:
        """The key of the open notification `sender` showed as `notification_id`."""
        if not sender or sender != self._owner:
            return None
        for key, shown in self._shown.items():
            if shown.owner == sender and shown.notification_id == notification_id:
                return key
        return None

    def _action(self, sender: str, notification_id: int, action: str) -> None:
        key = self._key_of(sender, notification_id)
        if key is None:
            # From the owner: another app's notification, or one of ours already over
            # (servers broadcast these). From anyone else: someone pretending.
            level = logging.DEBUG if sender == self._owner else logging.WARNING
            log.log(level, "ignored the action %r for notification %d from %s: not the "
                    "server that showed an open notification of ours (owner: %s)",
                    action, notification_id, sender, self._owner or "none")
            return
        if action not in self._shown[key].actions:
            log.warning("ignored the action %r for notification %d: it was not offered",
                        action, notification_id)
            return
        del self._shown[key]
        self._on_action(key, action)

    def _closed(self, sender: str, notification_id: int) -> None:
        key = self._key_of(sender, notification_id)
        if key is None:
            log.debug("ignored NotificationClosed(%d) from %s", notification_id, sender)
            return
        self._gone(key)

    def _owner_changed(self, old: str, new: str) -> None:
        self._owner = new
        if old and not self.replaced:
            self.replaced = True
            log.warning("%s changed hands (%s to %s): from now on notifications offer no "
                        "Allow once (answer in the dialog); restart Qoder Desktop to have it "
                        "back", BUS_NAME, old, new or "none")
        if self._shown:
            log.warning("%s changed owner (%s to %s): %d open notification(s) can no longer "
                        "answer; their requests wait in the dialogs", BUS_NAME,
                        old or "none", new or "none", len(self._shown))
        for key in list(self._shown):
            self._gone(key)

    def _gone(self, key: str) -> None:
        self._shown.pop(key, None)
        if self._on_gone is not None:
            self._on_gone(key)

    def _bus_lost(self, bus: Any, reason: str) -> None:
        if self._bus is bus:
            log.info("desktop notifications stopped: %s", reason)
            self._bus = None
            self._owner = ""
            self._status = ServiceStatus(False, detail=reason)
            for key in list(self._shown):
                self._gone(key)


async def _call(bus: SessionBus, member: str, signature: str = "", body: Sequence[Any] = (),
                *, destination: str = BUS_NAME, path: str = OBJECT_PATH,
                interface: str = BUS_NAME) -> BusMessage:
    """Call a method and return its reply; an error reply raises `BusError`."""
    return await bus.call(member, signature, body, destination=destination, path=path,
                          interface=interface)
