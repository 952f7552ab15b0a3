"""Port squatting: when the gateway's port is taken, is it us or someone else?

A squatter (a plain loopback server that records every byte it gets) holds the port:
the gateway refuses to start with a loud warning and never sends it the token. Another
gateway with our token on the port is "us": the ordinary "port in use" error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from helpers.app_side import app_side

from qoder_desktop.gateway.identity import PortHolder, port_holder
from qoder_desktop.gateway.server import (
    ApprovalGateway,
    GatewayPortInUse,
    GatewayPortSquatted,
)
from qoder_desktop.store.database import Database

pytestmark = pytest.mark.asyncio

TOKEN = "squat-test-gateway-token-0123456789"


class Squatter:
    """A loopback server that answers like a web server and keeps what it received."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.received = bytearray()
        self.server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            self.received.extend(await asyncio.wait_for(reader.read(65536), 2))
            writer.write(self.reply)
            await writer.drain()
        except (OSError, TimeoutError):
            pass
        finally:
            writer.close()

    async def start(self) -> int:
        """Listen on a free loopback port; returns it."""
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening."""
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


def gateway(db: Database, port: int, token: str = TOKEN) -> ApprovalGateway:
    """A gateway on `port` with its own broker and hub on `db`."""
    _ledger, broker, hub = app_side(db)
    return ApprovalGateway(broker, hub, token, port=port)


REPLIES = {
    "silence": b"",
    "an HTTP server": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    "a forged proof": (b"HTTP/1.1 200 OK\r\nContent-Length: 46\r\n\r\n"
                       b'{"server": "qoder-desktop", "proof": "00ff00"}'),
}


@pytest_asyncio.fixture(params=sorted(REPLIES))
async def squatter(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Squatter, int]]:
    """A squatter on a free port, answering in one of several ways."""
    squatter = Squatter(REPLIES[request.param])
    port = await squatter.start()
    try:
        yield squatter, port
    finally:
        await squatter.stop()


async def test_a_squatter_on_the_port_is_detected_and_never_gets_the_token(
        db: Database, squatter: tuple[Squatter, int]) -> None:
    server, port = squatter
    with pytest.raises(GatewayPortSquatted) as raised:
        await gateway(db, port).start()
    message = str(raised.value)
    assert "not Qoder Desktop" in message and f"127.0.0.1:{port}" in message
    assert "gateway is not running" in message and "another gateway port" in message
    # What happened to the token is the app's to say (`rotate_after_squatting`): the
    # error cannot know whether the token could be replaced.
    assert "replaced" not in message
    assert isinstance(raised.value, GatewayPortInUse)  # callers of the old error still see it
    assert TOKEN.encode() not in bytes(server.received)
    assert b"nonce=" in bytes(server.received)


async def test_another_gateway_with_our_token_is_us_not_a_squatter(db: Database) -> None:
    first = gateway(db, 0)
    await first.start()
    try:
        assert await port_holder("127.0.0.1", first.port, TOKEN) is PortHolder.US
        with pytest.raises(GatewayPortInUse) as raised:
            await gateway(db, first.port).start()
        assert not isinstance(raised.value, GatewayPortSquatted)
        # A gateway with another token cannot prove it is ours.
        assert await port_holder("127.0.0.1", first.port, "another-token") is PortHolder.OTHER
        with pytest.raises(GatewayPortSquatted):
            await gateway(db, first.port, token="another-token-0123456789").start()
    finally:
        await first.stop()


async def test_a_free_port_is_free() -> None:
    server = Squatter(b"")
    port = await server.start()
    await server.stop()
    assert await port_holder("127.0.0.1", port, TOKEN) is PortHolder.FREE
