"""The app's side of the hook's challenge: prove we hold the token, then make the hook
prove it too (see `protocol`). Neither side ever sends the token."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from qoder_desktop.terminal import protocol

log = logging.getLogger(__name__)

HELLO_TIMEOUT = 5.0
"""How long a connection may take to send its hello, its proof and its request."""


class Refused(Exception):
    """The connection is not a hook of this app (or not of this protocol version)."""


async def accept_hook(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      token: str) -> tuple[protocol.Sealer, dict[str, Any]]:
    """The connection's sealer and its request (``agent``, ``event``), once both sides
    proved they hold `token`.

    Raises:
        Refused: no valid hello, another protocol version, or no valid proof (logged).
        TimeoutError: the hook took too long.
    """
    line = await asyncio.wait_for(reader.readline(), HELLO_TIMEOUT)
    try:
        hello = protocol.decode(line)
    except ValueError:
        log.warning("terminal hooks: refused a hook of an older protocol (version 1 sends "
                    "its token in the clear); the terminal asks instead. Restart the agent "
                    "so it runs this version's hook.")
        raise Refused("not a hello") from None
    version = hello.get("version")
    if hello.get("hello") != protocol.HELLO or version != protocol.VERSION:
        log.warning("terminal hooks: refused a hook speaking protocol %r; this app speaks "
                    "%d. Restart the agent or Qoder Desktop so both are the same version.",
                    version, protocol.VERSION)
        writer.write(protocol.encode({"type": protocol.PASS, "version": protocol.VERSION,
                                      "reason": "another protocol version"}))
        await writer.drain()
        raise Refused("another protocol version")
    hook_nonce = hello.get("nonce")
    if not protocol.valid_nonce(hook_nonce):
        log.warning("terminal hooks: refused a hello without a valid nonce")
        raise Refused("no nonce")
    server_nonce = protocol.new_nonce()
    writer.write(protocol.encode({
        "type": protocol.CHALLENGE, "version": protocol.VERSION, "nonce": server_nonce,
        "proof": protocol.server_proof(token, str(hook_nonce), server_nonce)}))
    await writer.drain()
    sealer = protocol.Sealer(token, str(hook_nonce), server_nonce, sending=protocol.TO_HOOK,
                             receiving=protocol.TO_APP)
    line = await asyncio.wait_for(reader.readline(), HELLO_TIMEOUT)
    if not line:
        log.warning("terminal hooks: a hook left at the challenge (it holds another "
                    "token, or did not take our proof)")
        raise Refused("no proof")
    try:
        request = sealer.open(line)
    except ValueError:
        log.warning("terminal hooks: refused a hook that could not prove it holds the token")
        raise Refused("wrong proof") from None
    if not protocol.proof_matches(request.get("proof"),
                                  protocol.hook_proof(token, server_nonce, str(hook_nonce))):
        log.warning("terminal hooks: refused a hook that could not prove it holds the token")
        raise Refused("wrong proof")
    return sealer, request
