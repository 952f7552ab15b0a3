"""Serve on a listening socket from its first connection on (`ServeOnFirstConnection`).

Most sessions never meet an agent started elsewhere, yet the gateway's HTTP stack
(uvicorn, Starlette, the ``mcp`` SDK's HTTP transport: `http_stack`) costs a few MB
once loaded. So the gateway binds and listens at start (a port conflict or a squatter
is found at once), and only a reader on the socket waits: when a connection is
pending, the real server is built (its modules imported off the loop) and started on
that same socket, and it accepts the waiting connection from the kernel's queue.

Until then no connection is accepted, so a flood only fills the kernel's queue; the
server's own limits (`limits`) apply from its first accept. Any failure while
building or starting the server closes the socket (the waiting connections are
reset, nothing accepts and hangs) and is reported through ``on_failure``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import TYPE_CHECKING

from qoder_desktop.gateway.serving import GatewayError, wait_until_served

if TYPE_CHECKING:
    from uvicorn.server import Server

log = logging.getLogger(__name__)

START_TIMEOUT = 30.0
"""Seconds the server may take from the first connection until it serves."""


class ServingState(StrEnum):
    """Where a `ServeOnFirstConnection` is."""

    WAITING = "waiting"
    """Listening; no connection yet, the server not built."""
    STARTING = "starting"
    """A connection is waiting: the server is being built or started."""
    SERVING = "serving"
    FAILED = "failed"
    """The server could not start; the socket is closed."""
    STOPPED = "stopped"


class ServeOnFirstConnection:
    """Watches a listening socket and serves it with the server `build` makes, from
    the first connection on.

    Args:
        sock: a bound, listening socket (closed by `stop`, or on failure).
        build: makes the (uvicorn) server, not yet serving; awaited at the first
            connection.
        what: the server's name for messages ("the approval gateway").
        on_failure: told, once, when the server could not be built or started.
        start_timeout: seconds from the first connection until it must serve.
    """

    def __init__(self, sock: socket.socket, build: Callable[[], Awaitable[Server]], what: str,
                 on_failure: Callable[[GatewayError], None] | None = None,
                 start_timeout: float = START_TIMEOUT) -> None:
        self._sock = sock
        self._build = build
        self._what = what
        self._on_failure = on_failure
        self._start_timeout = start_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watched: int | None = None
        self._asked = asyncio.Event()
        self._server: Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.failure: GatewayError | None = None
        """Why the server could not start, once it failed."""

    @property
    def state(self) -> ServingState:
        """Waiting, starting, serving, failed or stopped."""
        if self.failure is not None:
            return ServingState.FAILED
        if self._stopping or (self._task is not None and self._task.done()):
            return ServingState.STOPPED
        if self._server is not None and self._server.started:
            return ServingState.SERVING
        return ServingState.STARTING if self._asked.is_set() else ServingState.WAITING

    @property
    def running(self) -> bool:
        """True from `start` until `stop` or a failure."""
        return self._task is not None and self.state not in (ServingState.FAILED,
                                                             ServingState.STOPPED)

    def start(self) -> None:
        """Wait (on the running loop) for the first connection."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        try:
            loop.add_reader(self._sock.fileno(), self._connection_waiting)
        except NotImplementedError:  # a proactor loop (Windows) watches no socket: serve now
            self._asked.set()
        else:
            self._watched = self._sock.fileno()
        self._task = loop.create_task(self._serve_when_asked(), name=f"serving {self._what}")

    async def stop(self) -> None:
        """Stop in any state: stop waiting, stop building, or stop serving; then close
        the socket. Idempotent."""
        self._stopping = True
        self._stop_watching()
        task, server = self._task, self._server
        if task is not None and not task.done():
            if server is None:  # waiting, or building the server
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            else:
                server.should_exit = True
                await wait_until_served(server, task, self._what)
        self._close_listeners()

    def _connection_waiting(self) -> None:
        self._stop_watching()  # the server's own reader takes over the socket
        self._asked.set()

    def _stop_watching(self) -> None:
        if self._watched is not None and self._loop is not None:
            self._loop.remove_reader(self._watched)
            self._watched = None

    async def _serve_when_asked(self) -> None:
        await self._asked.wait()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._start_timeout
        log.info("%s: an agent connected; starting its server", self._what)
        try:
            async with asyncio.timeout_at(deadline):
                server = await self._build()
        except Exception as exc:
            self._fail(exc)
            return
        self._server = server
        overdue = loop.call_at(deadline, self._startup_overdue)
        try:
            await server.serve(sockets=[self._sock])
        except (Exception, SystemExit) as exc:  # uvicorn exits when its own start fails
            self._fail(exc)
            return
        finally:
            overdue.cancel()
        if not server.started:
            self._fail(GatewayError(f"{self._what} ended before it served"))

    def _startup_overdue(self) -> None:
        if self._server is not None and not self._server.started and self._task is not None:
            self._fail(TimeoutError(f"not serving {self._start_timeout:.0f} s after the "
                                    "first connection"))
            self._task.cancel()

    def _fail(self, exc: BaseException) -> None:
        """Close the socket (fail closed) and report, once; a stop is no failure."""
        if self._stopping or self.failure is not None:
            return
        reason = exc if isinstance(exc, GatewayError) else f"{type(exc).__name__}: {exc}"
        self.failure = GatewayError(
            f"{self._what[:1].upper()}{self._what[1:]} could not start when an agent "
            f"connected ({reason}). It is not running; restart Qoder Desktop to try again.")
        log.error("%s could not start its server", self._what,
                  exc_info=None if isinstance(exc, GatewayError) else exc)
        self._stop_watching()
        self._close_listeners()
        if self._on_failure is not None:
            try:
                self._on_failure(self.failure)
            except Exception:
                log.exception("%s: reporting its failure failed", self._what)

    def _close_listeners(self) -> None:
        """Close the server's listeners (asyncio stops reading them) and the socket."""
        server = self._server
        for listener in getattr(server, "servers", None) or ():
            listener.close()
        self._sock.close()
