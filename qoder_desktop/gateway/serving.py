"""Serving the gateway: its errors, the loopback socket and stopping a uvicorn server.

Light on purpose: the gateway listens at start with only this, and its HTTP stack
(`http_stack`) loads when the first agent connects."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
from typing import TYPE_CHECKING

from qoder_desktop.gateway.contract import LOOPBACK
from qoder_desktop.gateway.limits import LISTEN_BACKLOG

if TYPE_CHECKING:
    from uvicorn.server import Server

log = logging.getLogger(__name__)


class GatewayError(RuntimeError):
    """The gateway could not start."""


class GatewayPortInUse(GatewayError):
    """Something else already listens on the gateway's port."""

    def __init__(self, port: int, host: str = LOOPBACK) -> None:
        super().__init__(f"Port {port} on {host} is already in use, so the approval gateway "
                         "could not start. Choose another gateway port in Settings.")
        self.port = port


class GatewayPortHeldByCopy(GatewayPortInUse):
    """Another Qoder Desktop of this user (another data folder) serves on the port."""

    def __init__(self, port: int, data_folder: str, host: str = LOOPBACK) -> None:
        GatewayError.__init__(
            self, f"Another Qoder Desktop, with data folder {data_folder}, is serving the "
            f"approval gateway on {host}:{port}, so this one could not start. Choose "
            "another gateway port in Settings (or quit the other copy).")
        self.port = port
        self.data_folder = data_folder


class GatewayPortSquatted(GatewayPortInUse):
    """The gateway's port is held by something that is not a Qoder Desktop gateway."""

    def __init__(self, port: int, host: str = LOOPBACK) -> None:
        GatewayError.__init__(
            self, f"Warning: something that is not Qoder Desktop listens on {host}:{port}, "
            "the approval gateway's port. Agents set up for the gateway would send it the "
            "gateway token, and whoever runs it could answer their permission prompts. "
            "The gateway is not running. Choose another gateway port in Settings and find "
            "out what holds the port.")
        self.port = port


def bind_loopback(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port`, its connections without Nagle's delay.

    asyncio sets `TCP_NODELAY` on a connection only when its socket's `proto` is
    `IPPROTO_TCP`; a socket made with `proto` 0, and every connection it accepts, kept
    Nagle's algorithm, so a reply written in more than one piece waited for the agent's
    delayed ACK (benchmarks/README.md, "The gateway's round trip"). Made with
    `IPPROTO_TCP`, and the option set on the listener too, whose connections inherit it.

    Raises:
        GatewayPortInUse: the port is taken.
        GatewayError: another failure.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if os.name == "posix":  # elsewhere SO_REUSEADDR would let us steal a live port
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES) or getattr(exc, "winerror", 0) in (
                10013, 10048):
            raise GatewayPortInUse(port, host) from exc
        raise GatewayError(f"The approval gateway could not listen on {host}:"
                           f"{port}: {exc.strerror or exc}") from exc
    return sock


async def wait_until_served(server: Server, task: asyncio.Task[None], what: str) -> None:
    """Wait for a uvicorn `server` told to exit (`should_exit`) to end its `task`: after 5 s
    it is forced and cancelled; an error on the way is logged as `what` failing to stop."""
    try:
        await asyncio.wait_for(asyncio.shield(task), timeout=5)
    except TimeoutError:
        server.force_exit = True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    except Exception:
        log.exception("%s failed while stopping", what)
