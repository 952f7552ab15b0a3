"""A small asyncio client of the D-Bus session bus, on jeepney (`SessionBus`).

The notification backend needs four things from the bus: call a method and get its
reply (with the reply's sender, which the bus daemon stamps), see every signal in the
order the daemon sent it, notice when the connection goes away, and leave. jeepney does
the wire format and the authentication in pure Python (~0.5 MB loaded); dbus-fast, which
did this before, loaded ~40 modules and compiled extensions (~3.9 MB) for the same calls.

Signals are handed to the handler as they are read, in the daemon's order, before the
next message is read: a reply that comes before a signal resolves its call first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

DBUS_NAME = "org.freedesktop.DBus"
DBUS_PATH = "/org/freedesktop/DBus"


class BusError(RuntimeError):
    """An error reply, or no reply (the connection closed).

    Args:
        message: what went wrong, for people.
        error_name: the D-Bus error's name (``"no reply"`` when none came).
    """

    def __init__(self, message: str, error_name: str = "no reply") -> None:
        super().__init__(message)
        self.error_name = error_name


@dataclass(frozen=True)
class BusMessage:
    """What the backend reads of a received message.

    Attributes:
        kind: ``"signal"``, ``"method_return"``, ``"error"`` or ``"method_call"``.
        sender: the unique name of the sender (stamped by the daemon; "" if none).
        path, interface, member, signature: as in the header ("" when absent).
        error_name: the error's name, for an error reply.
        body: the decoded arguments.
    """

    kind: str
    sender: str
    path: str
    interface: str
    member: str
    signature: str
    error_name: str
    body: tuple[Any, ...]


def _read(message: Any, names: Any) -> BusMessage:
    """`message` as a `BusMessage` (`names`: jeepney's `HeaderFields`, imported once by
    the reader rather than at every message)."""
    fields = message.header.fields
    return BusMessage(message.header.message_type.name, str(fields.get(names.sender, "")),
                      str(fields.get(names.path, "")), str(fields.get(names.interface, "")),
                      str(fields.get(names.member, "")), str(fields.get(names.signature, "")),
                      str(fields.get(names.error_name, "")), tuple(message.body))


class SessionBus:
    """One connection to the session bus, read by a task of its own.

    Args:
        on_signal: called with each signal, in order, on the loop (an exception it raises
            is logged; the reading goes on).
    """

    def __init__(self, on_signal: Callable[[BusMessage], None] | None = None) -> None:
        self._on_signal = on_signal
        self._conn: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: dict[int, asyncio.Future[BusMessage]] = {}
        self.unique_name = ""
        """Our unique name on the bus (``:1.42``), once connected."""

    async def connect(self, bus: str = "SESSION") -> SessionBus:
        """Connect, authenticate and say Hello; raises `OSError`/`BusError` when it can't."""
        from jeepney.io.asyncio import open_dbus_connection

        self._conn = await open_dbus_connection(bus)  # says Hello on its own (10 s at most)
        self.unique_name = str(self._conn.unique_name or "")
        self._reader = asyncio.ensure_future(self._read_all())
        return self

    async def call(self, member: str, signature: str = "", body: Sequence[Any] = (), *,
                   destination: str, path: str, interface: str) -> BusMessage:
        """Call a method; its reply (an error reply raises `BusError`)."""
        from jeepney import DBusAddress, new_method_call

        if self._conn is None or self._reader is None or self._reader.done():
            raise BusError("not connected to the session bus")
        message = new_method_call(DBusAddress(path, bus_name=destination, interface=interface),
                                  member, signature or None, tuple(body))
        serial = next(self._conn.outgoing_serial)  # the connection's one counter
        reply: asyncio.Future[BusMessage] = asyncio.get_running_loop().create_future()
        self._waiting[serial] = reply
        try:
            await self._conn.send(message, serial=serial)
            answer = await reply
        finally:
            self._waiting.pop(serial, None)
        if answer.kind == "error":
            text = str(answer.body[0]) if answer.body else ""
            raise BusError(f"{answer.error_name}: {text}" if text else answer.error_name,
                           answer.error_name)
        return answer

    async def wait_for_disconnect(self) -> None:
        """Return when the connection has closed (raises what closed it, if anything)."""
        if self._reader is not None:
            await asyncio.shield(self._reader)

    def disconnect(self) -> None:
        """Leave the bus now; calls still waiting fail. Never raises."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.writer.close()
        self._fail_waiting("left the session bus")

    async def _read_all(self) -> None:
        from jeepney import HeaderFields, MessageType

        try:
            while True:
                raw = await self._conn.receive()
                kind = raw.header.message_type
                if kind in (MessageType.method_return, MessageType.error):
                    waiting = self._waiting.get(raw.header.fields.get(HeaderFields.reply_serial))
                    if waiting is not None and not waiting.done():
                        waiting.set_result(_read(raw, HeaderFields))
                elif kind is MessageType.signal and self._on_signal is not None:
                    try:
                        self._on_signal(_read(raw, HeaderFields))
                    except Exception:  # a handler's error must not stop the reading
                        log.exception("handling a D-Bus signal failed")
        except EOFError:
            return
        finally:
            self._fail_waiting("the session bus closed the connection")

    def _fail_waiting(self, reason: str) -> None:
        for waiting in list(self._waiting.values()):
            if not waiting.done():
                waiting.set_exception(BusError(f"no reply: {reason}"))
