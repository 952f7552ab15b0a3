"""A private D-Bus session bus and a small freedesktop notification server for tests.

`private_bus(folder)` starts ``dbus-daemon`` with a minimal session config (no service
activation, so nothing else on the machine can answer) and yields its address.
`NotificationServer` implements ``org.freedesktop.Notifications`` with ``dbus-fast``:
``Notify`` records its arguments and returns ids, ``CloseNotification`` records the id,
and the test emits ``ActionInvoked`` as a person's click would. It owns the name with
``ALLOW_REPLACEMENT``, so `StandIn` — the same server in another process, asking with
``REPLACE_EXISTING`` — can take the name over mid-test, as a same-user process that ends
the desktop's server and claims its name would.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from dbus_fast import Message
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusSignature
from dbus_fast.constants import NameFlag, RequestNameReply
from dbus_fast.service import ServiceInterface, dbus_method, dbus_signal

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"

_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={sockets}</listen>
  <auth>EXTERNAL</auth>{services}
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def dbus_daemon() -> str | None:
    """The dbus-daemon executable, if installed."""
    return shutil.which("dbus-daemon")


@contextmanager
def private_bus(folder: Path, *, activates: bool = False) -> Iterator[str]:
    """Run a private session bus for the block; yields its address.

    With `activates`, the bus starts a notification server (this file, in another
    process) the first time someone calls ``org.freedesktop.Notifications``, as desktops
    whose notification daemon is D-Bus activated do.
    """
    daemon = dbus_daemon()
    if daemon is None:
        raise RuntimeError("dbus-daemon is not installed (Debian: apt-get install dbus)")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "session.conf"
    services = ""
    if activates:
        service_dir = folder / "services"
        service_dir.mkdir(exist_ok=True)
        (service_dir / f"{BUS_NAME}.service").write_text(
            f"[D-BUS Service]\nName={BUS_NAME}\nExec={sys.executable} {__file__} "
            "--activated\n", encoding="utf-8")
        services = f"\n  <servicedir>{service_dir}</servicedir>"
    # the bus's socket in a short folder of its own: a Unix socket path must fit in
    # sun_path (~104 bytes), and a test's tmp_path can come near that
    sockets = Path(tempfile.mkdtemp(prefix="bus", dir="/tmp"))
    config.write_text(_CONFIG.format(sockets=sockets, services=services), encoding="utf-8")
    process = subprocess.Popen([daemon, f"--config-file={config}", "--print-address=1",
                                "--nofork", "--nopidfile"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ))
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        if not address:
            raise RuntimeError("dbus-daemon printed no address")
        yield address
    finally:
        process.terminate()
        process.wait(10)
        shutil.rmtree(sockets, ignore_errors=True)
        if process.stdout is not None:
            process.stdout.close()


@dataclass(frozen=True)
class NotifyCall:
    """One recorded ``Notify`` call."""

    notification_id: int
    app_name: str
    replaces_id: int
    summary: str
    body: str
    actions: list[str]
    hints: dict[str, Any]
    expire_timeout: int

    def action_pairs(self) -> list[tuple[str, str]]:
        """The actions as (key, label) pairs."""
        return list(zip(self.actions[::2], self.actions[1::2], strict=True))


class _Interface(ServiceInterface):
    def __init__(self, server: NotificationServer) -> None:
        super().__init__(BUS_NAME)
        self._server = server

    @dbus_method()
    def GetCapabilities(self) -> Annotated[list[str], DBusSignature("as")]:
        return list(self._server.capabilities)

    @dbus_method()
    def GetServerInformation(
            self) -> Annotated[tuple[str, str, str, str], DBusSignature("ssss")]:
        return ("test-notifications", "qoder-tests", "1.0", "1.2")

    @dbus_method()
    def Notify(self, app_name: Annotated[str, DBusSignature("s")],
               replaces_id: Annotated[int, DBusSignature("u")],
               app_icon: Annotated[str, DBusSignature("s")],
               summary: Annotated[str, DBusSignature("s")],
               body: Annotated[str, DBusSignature("s")],
               actions: Annotated[list[str], DBusSignature("as")],
               hints: Annotated[dict[str, Any], DBusSignature("a{sv}")],
               expire_timeout: Annotated[int, DBusSignature("i")],
               ) -> Annotated[int, DBusSignature("u")]:
        return self._server.record_notify(app_name, replaces_id, summary, body, actions,
                                          hints, expire_timeout)

    @dbus_method()
    def CloseNotification(  # type: ignore[no-untyped-def]
            self, notification_id: Annotated[int, DBusSignature("u")]):
        self._server.closed.append(notification_id)
        self.NotificationClosed(notification_id, 3)

    @dbus_signal()
    def ActionInvoked(self, notification_id: int,
                      action_key: str) -> Annotated[tuple[int, str], DBusSignature("us")]:
        return (notification_id, action_key)

    @dbus_signal()
    def NotificationClosed(self, notification_id: int,
                           reason: int) -> Annotated[tuple[int, int], DBusSignature("uu")]:
        return (notification_id, reason)


class NotificationServer:
    """A notification server on a bus: records calls, emits clicks on request.

    Args:
        capabilities: what ``GetCapabilities`` answers (``actions`` means buttons).
    """

    def __init__(self, capabilities: tuple[str, ...] = ("actions", "body")) -> None:
        self.capabilities = capabilities
        self.notified: list[NotifyCall] = []
        self.closed: list[int] = []
        self._next_id = 1
        self._bus: MessageBus | None = None
        self._interface = _Interface(self)

    async def start(self, address: str, *, replace: bool = False, own: bool = True) -> None:
        """Connect to the bus at `address` and own the notification service name
        (taking it from its owner when `replace`; not at all unless `own`)."""
        self._bus = await MessageBus(bus_address=address).connect()
        self._bus.export(OBJECT_PATH, self._interface)
        if not own:
            return
        flags = NameFlag.ALLOW_REPLACEMENT | (NameFlag.REPLACE_EXISTING if replace
                                              else NameFlag.NONE)
        reply = await self._bus.request_name(BUS_NAME, flags)
        if reply is not RequestNameReply.PRIMARY_OWNER:
            raise RuntimeError(f"could not own {BUS_NAME}: {reply}")

    @property
    def unique_name(self) -> str:
        """This server's unique bus name (``:1.N``)."""
        assert self._bus is not None and self._bus.unique_name
        return self._bus.unique_name

    def stop(self) -> None:
        """Leave the bus."""
        if self._bus is not None:
            self._bus.disconnect()
            self._bus = None

    def record_notify(self, app_name: str, replaces_id: int, summary: str, body: str,
                      actions: list[str], hints: dict[str, Any], expire_timeout: int) -> int:
        """Record one ``Notify`` and return its id."""
        notification_id = replaces_id or self._next_id
        self._next_id += 1
        self.notified.append(NotifyCall(notification_id, app_name, replaces_id, summary, body,
                                        list(actions), dict(hints), expire_timeout))
        return notification_id

    def click(self, notification_id: int, action_key: str) -> None:
        """Emit ``ActionInvoked`` as the server does when a person presses a button."""
        self._interface.ActionInvoked(notification_id, action_key)

    def dismiss(self, notification_id: int) -> None:
        """Emit ``NotificationClosed(id, 2)`` as the server does when a person dismisses it."""
        self._interface.NotificationClosed(notification_id, 2)

    def last(self) -> NotifyCall:
        """The most recent ``Notify``."""
        return self.notified[-1]


class ServerThread:
    """A `NotificationServer` on its own loop and thread (for callers that block)."""

    def __init__(self, address: str,
                 capabilities: tuple[str, ...] = ("actions", "body")) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = NotificationServer(capabilities)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(address), self.loop).result(10)

    def stop(self) -> None:
        """Leave the bus and end the thread."""
        self.loop.call_soon_threadsafe(self.server.stop)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    def call(self, function: Any, *args: Any) -> None:
        """Run `function(*args)` on the server's loop (e.g. `server.click`)."""
        self.loop.call_soon_threadsafe(function, *args)


class StandIn:
    """A notification server in another process that takes the name over (`start`).

    It reports each ``Notify`` it answers (`notified`), and `click` makes it emit
    ``ActionInvoked`` — as a same-user process would, for any id it likes.
    """

    def __init__(self, address: str) -> None:
        self.notified: list[tuple[int, str]] = []
        self.unique_name = ""
        self.synced = 0
        self._process = subprocess.Popen(
            [sys.executable, __file__, address], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "ready":
                self.unique_name = rest
            elif kind == "synced":
                self.synced += 1
            elif kind == "notified":
                number, _, summary = rest.partition(" ")
                self.notified.append((int(number), summary))

    @property
    def ready(self) -> bool:
        """True once the stand-in owns the name."""
        return bool(self.unique_name)

    def click(self, notification_id: int, action_key: str) -> None:
        """Emit ``ActionInvoked(notification_id, action_key)`` from the stand-in."""
        assert self._process.stdin is not None
        self._process.stdin.write(f"click {notification_id} {action_key}\n")
        self._process.stdin.flush()

    def sync(self) -> None:
        """Ask for a round trip to the bus daemon after the clicks so far: once `synced`
        counts it, the daemon has routed those clicks (before anything sent later)."""
        assert self._process.stdin is not None
        self._process.stdin.write("sync\n")
        self._process.stdin.flush()

    def stop(self) -> None:
        """End the stand-in process."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(10)
        self._reader.join(10)
        if self._process.stdout is not None:
            self._process.stdout.close()


async def _stand_in(address: str) -> None:
    """The stand-in process: take the name, report Notify calls, click on command."""
    server = NotificationServer()
    loop = asyncio.get_running_loop()
    original = server.record_notify

    def record(*args: Any) -> int:
        number = original(*args)
        print(f"notified {number} {server.last().summary}", flush=True)
        return number

    server.record_notify = record  # type: ignore[method-assign]
    await server.start(address, replace=True)
    print(f"ready {server.unique_name}", flush=True)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        command, *args = line.split()
        if command == "click":
            server.click(int(args[0]), args[1])
        elif command == "sync" and server._bus is not None:
            await server._bus.call(Message(destination="org.freedesktop.DBus",
                                           path="/org/freedesktop/DBus",
                                           interface="org.freedesktop.DBus", member="GetId"))
            print("synced", flush=True)
    server.stop()


async def _activated() -> None:
    """Started by the bus: serve until the bus goes away."""
    server = NotificationServer()
    await server.start(os.environ["DBUS_STARTER_ADDRESS"])
    assert server._bus is not None
    await server._bus.wait_for_disconnect()


if __name__ == "__main__":
    asyncio.run(_activated() if sys.argv[1] == "--activated" else _stand_in(sys.argv[1]))
