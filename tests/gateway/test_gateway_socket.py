"""The gateway's connections send at once: Nagle's algorithm is off on each one, so a
reply written in pieces never waits for the agent's delayed ACK."""

from __future__ import annotations

import socket

import pytest
from helpers.gateway_rig import Fixture, mcp_client


@pytest.mark.asyncio
async def test_every_accepted_connection_has_tcp_nodelay(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        await session.send_ping()
        connections = gw.gateway.guard.connections()
        assert connections  # (the client's connections, seen from the gateway)
        for connection in connections:
            sock = connection.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
