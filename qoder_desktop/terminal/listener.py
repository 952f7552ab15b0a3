"""Accepting hook connections so that a local flood can neither freeze the app nor fill
its log.

Any process of the user can connect to the hook socket. Connections that never prove
they hold the token used to stay open for seconds each with up to 4 MiB buffered, until
``accept()`` failed for want of file descriptors; asyncio handed each failure to the
app's error reporter, whose message box then hung the GUI (a window needs descriptors
too). Here:

- `HookListener` owns the listening socket and its ``accept()``: at most `ACCEPT_BATCH`
  per wake-up; an error there is logged (rate-limited), never raised into the loop. Out
  of descriptors (EMFILE/ENFILE), it closes the oldest unproven connection and pauses
  accepting for `ACCEPT_PAUSE` seconds; proven hooks go on being served meanwhile.
- It keeps at most `max_connections` open (`MAX_CONNECTIONS`, or a quarter of the
  descriptor limit if less). At the cap a new connection pushes out the oldest one that
  has not proved itself yet (first those that have not even said hello: a real hook says
  it at once); when every open one is a proven hook, the new one is closed.
- Each connection runs the server's handler in a task of its own; until the handler
  calls `HookConnection.proven`, the connection may be evicted (its task cancelled).
- `terminal_log_limit` rate-limits the loggers a flood would fill (`FLOOD_LOGGERS`).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from qoder_desktop.diagnostics.flood import RateLimitedLog, descriptor_budget

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 64
"""Open hook connections at most (one per permission prompt waiting for a person)."""
ACCEPT_BATCH = 16
"""Connections accepted per wake-up of the loop."""
LISTEN_BACKLOG = 128
"""Connections the kernel queues for accepting (a hook whose connect finds the queue
full tries again for a while, `hook_client.CONNECT_TIMEOUT`)."""
ACCEPT_PAUSE = 0.25
"""Seconds accepting pauses after ``accept()`` found no file descriptor free."""
OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
FLOOD_LOGGERS = ("qoder_desktop.terminal.server", "qoder_desktop.terminal.challenge",
                 __name__)
"""Loggers that log once per bad connection or failed accept."""


def terminal_log_limit() -> RateLimitedLog:
    """The rate limit for the hook socket's `FLOOD_LOGGERS` (install it while listening)."""
    return RateLimitedLog(loggers=FLOOD_LOGGERS)


class HookConnection:
    """One accepted connection: its socket, its task, and whether its hook proved itself."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.said_hello = False
        self.is_proven = False
        self.task: asyncio.Task[None] | None = None
        self._writer: asyncio.StreamWriter | None = None

    def __repr__(self) -> str:
        return f"HookConnection(fd={self.sock.fileno()}, proven={self.is_proven})"

    def greeted(self) -> None:
        """The connection sent a hello: the cap pushes out silent ones before it."""
        self.said_hello = True

    def proven(self) -> None:
        """The hook proved it holds the token: the cap never pushes it out now."""
        self.is_proven = True

    async def streams(self, already_read: bytes, limit: int
                      ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A reader (taking lines up to `limit` bytes, starting with `already_read`) and
        a writer on the socket."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=limit, loop=loop)
        if already_read:
            reader.feed_data(already_read)
        stream = asyncio.StreamReaderProtocol(reader, loop=loop)
        transport, _ = await loop.connect_accepted_socket(lambda: stream, self.sock)
        self._writer = asyncio.StreamWriter(transport, stream, reader, loop)
        return reader, self._writer

    def close(self) -> None:
        """Close the connection (the socket, or the streams once made)."""
        if self._writer is None:
            self.sock.close()
        else:
            self._writer.close()


class HookListener:
    """Accepts connections on a Unix socket for `handler`, under a cap.

    Args:
        handler: serves one connection (runs in a task of its own).
        max_connections: the cap (lowered to a quarter of the descriptor limit).

    Attributes:
        evicted: unproven connections closed to make room.
        refused: new connections closed because every open one was a proven hook.
        accept_errors: ``accept()`` calls that failed.
    """

    def __init__(self, handler: Callable[[HookConnection], Coroutine[Any, Any, None]], *,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self._handler = handler
        self.max_connections = max(1, min(max_connections, descriptor_budget(max_connections)))
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._resume: asyncio.TimerHandle | None = None
        self._open: dict[HookConnection, None] = {}  # insertion order: oldest first
        self.evicted = 0
        self.refused = 0
        self.accept_errors = 0

    @property
    def connections(self) -> list[HookConnection]:
        """The open connections, oldest first."""
        return list(self._open)

    def listen(self, path: Path) -> None:
        """Listen on `path` (readable and writable by the user only).

        Raises:
            OSError: the socket could not be made.
        """
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            old_umask = os.umask(0o177)
            try:
                sock.bind(str(path))
            finally:
                os.umask(old_umask)
            os.chmod(path, 0o600)
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._sock, self._loop = sock, loop
        loop.add_reader(sock.fileno(), self._accept)

    def close(self) -> None:
        """Stop accepting and close the unproven connections; proven ones go on."""
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        sock, self._sock = self._sock, None
        if sock is not None and self._loop is not None:
            self._loop.remove_reader(sock.fileno())
            sock.close()
        for connection in list(self._open):
            if not connection.is_proven:
                self._drop(connection)

    def _accept(self) -> None:
        for _ in range(ACCEPT_BATCH):
            if self._sock is None:
                return
            try:
                sock, _address = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                self._accept_failed(exc)
                return
            self._admit(sock)

    def _accept_failed(self, exc: OSError) -> None:
        self.accept_errors += 1
        if exc.errno in OUT_OF_DESCRIPTORS:
            victim = self._oldest_unproven()
            log.warning("terminal hooks: could not accept a connection (%s); %s, and "
                        "accepting pauses for %g s", exc.strerror or exc,
                        "closed the oldest unproven one" if victim else "none to close",
                        ACCEPT_PAUSE)
            if victim is not None:
                self.evicted += 1
                self._drop(victim)
        else:
            log.warning("terminal hooks: could not accept a connection (%s); accepting "
                        "pauses for %g s", exc.strerror or exc, ACCEPT_PAUSE)
        self._pause()

    def _pause(self) -> None:
        if self._sock is None or self._loop is None or self._resume is not None:
            return
        self._loop.remove_reader(self._sock.fileno())
        self._resume = self._loop.call_later(ACCEPT_PAUSE, self._unpause)

    def _unpause(self) -> None:
        self._resume = None
        if self._sock is not None and self._loop is not None:
            self._loop.add_reader(self._sock.fileno(), self._accept)

    def _admit(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        if len(self._open) >= self.max_connections:
            victim = self._oldest_unproven()
            if victim is None:
                self.refused += 1
                log.warning("terminal hooks: %d hooks are waiting already; refused one more "
                            "(its terminal asks instead)", len(self._open))
                sock.close()
                return
            self.evicted += 1
            log.warning("terminal hooks: at %d connections; closed the oldest that has not "
                        "proved it is a hook", self.max_connections)
            self._drop(victim)
        connection = HookConnection(sock)
        self._open[connection] = None
        assert self._loop is not None
        connection.task = self._loop.create_task(self._handler(connection))
        connection.task.add_done_callback(lambda _task: self._finished(connection))

    def _oldest_unproven(self) -> HookConnection | None:
        """The connection the cap pushes out: the oldest silent one, else the oldest
        unproven one."""
        return next((c for c in self._open if not c.said_hello),
                    next((c for c in self._open if not c.is_proven), None))

    def _drop(self, connection: HookConnection) -> None:
        """Forget `connection` and end its task (which closes it)."""
        self._open.pop(connection, None)
        if connection.task is not None:
            connection.task.cancel()

    def _finished(self, connection: HookConnection) -> None:
        """The handler is done (or was cancelled, maybe before it began): close."""
        self._open.pop(connection, None)
        connection.close()
