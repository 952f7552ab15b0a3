"""The app's side of the hook's challenge: prove we hold the token, then make the hook
prove it too (see `protocol`). Neither side ever sends the token.

Until the hook has proved itself, the app reads the raw socket in small pieces: at most
`protocol.HELLO_LIMIT` bytes in all (the hello and the head of the request line that
holds the hook's proof), all within one deadline (`HANDSHAKE_TIMEOUT`). A connection that
sends more, something else, or is slower is dropped; what an unproven connection can
make the app hold is bounded by that limit. Only a proven hook gets a stream that takes
its request line of up to `protocol.MAX_LINE` bytes (`read_request`). `accept_hook`
runs both.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass
from typing import Any

from qoder_desktop.terminal import protocol
from qoder_desktop.terminal.listener import HookConnection

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 2.0
"""Seconds a connection may take for its hello and its proof together (the hook sends
both at once; it gives the app as long to answer)."""
REQUEST_TIMEOUT = 5.0
"""Seconds a proven hook may take to send the rest of its request line."""


class Refused(Exception):
    """The connection is not a hook of this app (or not of this protocol version)."""


class TooSlow(Refused):
    """The connection did not prove it is a hook within the handshake deadline."""


async def accept_hook(connection: HookConnection, token: str,
                      timeout: float = HANDSHAKE_TIMEOUT
                      ) -> tuple[protocol.Sealer, asyncio.StreamReader, asyncio.StreamWriter,
                                 dict[str, Any]]:
    """The connection's sealer, streams and request (``agent``, ``event``), once both
    sides proved they hold `token` (`prove`, then `read_request`).

    Raises:
        Refused: not a hook of this app, or too slow (`TooSlow`) (logged).
        ConnectionError: the connection broke.
    """
    try:
        proven = await prove(connection, token, timeout)
    except TimeoutError:
        log.info("terminal hooks: dropped a connection that did not prove it is a hook "
                 "within %g s", timeout)
        raise TooSlow("no proof in time") from None
    connection.proven()
    reader, writer = await connection.streams(proven.read, protocol.MAX_LINE)
    try:
        return proven.sealer, reader, writer, await read_request(reader, proven)
    except TimeoutError:
        log.info("terminal hooks: a hook took too long to send its request")
        raise Refused("no request in time") from None


@dataclass
class Proven:
    """A connection whose hook proved it holds the token.

    Attributes:
        sealer: seals and opens this connection's lines.
        read: what was read of the request line so far (it starts with the proof).
        expected_proof: the hook's proof, checked again in the whole line.
    """

    sealer: protocol.Sealer
    read: bytes
    expected_proof: str

    def __repr__(self) -> str:
        return f"Proven(read={len(self.read)} bytes)"


async def prove(connection: HookConnection, token: str,
                timeout: float = HANDSHAKE_TIMEOUT) -> Proven:
    """Run the challenge on the connection's raw, non-blocking socket (at most
    `protocol.HELLO_LIMIT` bytes read, all within `timeout` seconds).

    Raises:
        Refused: no valid hello, another protocol version, or no valid proof (logged).
        TimeoutError: the connection took longer than `timeout`.
        ConnectionError: the connection broke.
    """
    loop = asyncio.get_running_loop()
    sock = connection.sock
    async with asyncio.timeout(timeout):
        line, extra = await _read_hello(loop, sock)
        hook_nonce, version = _check_hello(line)
        if hook_nonce is None:
            await loop.sock_sendall(sock, protocol.encode({
                "type": protocol.PASS, "version": protocol.VERSION,
                "reason": "another protocol version"}))
            raise Refused("another protocol version")
        connection.greeted()
        server_nonce = protocol.new_nonce()
        await loop.sock_sendall(sock, protocol.encode({
            "type": protocol.CHALLENGE, "version": version, "nonce": server_nonce,
            "proof": protocol.server_proof(token, hook_nonce, server_nonce)}))
        head = extra
        while len(head) < protocol.PROOF_HEAD_LENGTH:
            chunk = await loop.sock_recv(sock, protocol.PROOF_HEAD_LENGTH - len(head))
            if not chunk:
                log.warning("terminal hooks: a hook left at the challenge (it holds "
                            "another token, or did not take our proof)")
                raise Refused("no proof")
            head += chunk
    expected = protocol.hook_proof(token, server_nonce, hook_nonce)
    if not protocol.proof_matches(protocol.proof_head(head[:protocol.PROOF_HEAD_LENGTH]),
                                  expected):
        log.warning("terminal hooks: refused a hook that could not prove it holds the token")
        raise Refused("wrong proof")
    sealer = protocol.Sealer(token, hook_nonce, server_nonce, sending=protocol.TO_HOOK,
                             receiving=protocol.TO_APP, version=version)
    return Proven(sealer, head, expected)


async def _read_hello(loop: asyncio.AbstractEventLoop,
                      sock: socket.socket) -> tuple[bytes, bytes]:
    """The first line and whatever came after it, reading no more than the limit."""
    buffer = b""
    while b"\n" not in buffer:
        if len(buffer) >= protocol.HELLO_LIMIT:
            log.warning("terminal hooks: refused a connection whose first line is longer "
                        "than a hook's hello")
            raise Refused("hello too long")
        chunk = await loop.sock_recv(sock, protocol.HELLO_LIMIT - len(buffer))
        if not chunk:
            if not buffer:
                log.info("terminal hooks: a connection closed before it said hello")
                raise Refused("no hello")
            break
        buffer += chunk
    line, _, extra = buffer.partition(b"\n")
    return line, extra


def _check_hello(line: bytes) -> tuple[str | None, int]:
    """The hook's nonce and protocol version; no nonce for a hello of a version we do
    not speak (older than `protocol.OLDEST_VERSION`, or newer than ours).

    Raises:
        Refused: not a hello of any version we can answer (logged).
    """
    try:
        hello = protocol.decode(line)
    except ValueError:
        log.warning("terminal hooks: refused a hook of an older protocol (version 1 sends "
                    "its token in the clear); the terminal asks instead. Restart the agent "
                    "so it runs this version's hook.")
        raise Refused("not a hello") from None
    version = hello.get("version")
    if (hello.get("hello") != protocol.HELLO or not isinstance(version, int)
            or isinstance(version, bool)
            or not protocol.OLDEST_VERSION <= version <= protocol.VERSION):
        log.warning("terminal hooks: refused a hook speaking protocol %r; this app speaks "
                    "%d. Restart the agent or Qoder Desktop so both are the same version.",
                    version, protocol.VERSION)
        return None, protocol.VERSION
    hook_nonce = hello.get("nonce")
    if not protocol.valid_nonce(hook_nonce):
        log.warning("terminal hooks: refused a hello without a valid nonce")
        raise Refused("no nonce")
    return str(hook_nonce), version


async def read_request(reader: asyncio.StreamReader, proven: Proven,
                       timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
    """The proven hook's request (``agent``, ``event``): the rest of its sealed line,
    up to `protocol.MAX_LINE` bytes (`reader` holds what `prove` read already).

    Raises:
        Refused: the line is too long, not sealed with this connection's key, or its
            proof is not the one checked in its head (logged).
        TimeoutError: the hook took longer than `timeout`.
    """
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except ValueError:
        log.warning("terminal hooks: refused a request longer than %d bytes",
                    protocol.MAX_LINE)
        raise Refused("request too long") from None
    try:
        request = proven.sealer.open(line)
    except ValueError:
        log.warning("terminal hooks: refused a hook that could not prove it holds the token")
        raise Refused("wrong proof") from None
    if not protocol.proof_matches(request.get("proof"), proven.expected_proof):
        log.warning("terminal hooks: refused a hook that could not prove it holds the token")
        raise Refused("wrong proof")
    return request
