"""Who calls the gateway: each MCP session (one agent run) is its own session in the hub,
named by the client and working in the client's first folder; two runs of the same
client never share a session (so a grant for one never reaches the other).

A real MCP client (the `mcp` SDK) against the gateway on loopback.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.gateway_rig import WAIT, Fixture, ask, mcp_client

from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision


async def one_request(gw: Fixture, **client: object) -> ApprovalRequest:
    """Open an MCP session, have it ask once, deny it; the request the broker got."""
    async with mcp_client(gw.gateway.url, **client) as session:  # type: ignore[arg-type]
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.deny("no"))
        await asyncio.wait_for(call, WAIT)
    return request


@pytest.mark.asyncio
async def test_each_agent_run_gets_its_own_session_even_with_the_same_name(gw: Fixture) -> None:
    first = await one_request(gw, name="coder", version="2.1")
    second = await one_request(gw, name="coder", version="2.1")
    assert first.session_id != second.session_id
    for request in (first, second):
        info = gw.hub.session(request.session_id)
        assert info.name == "coder 2.1" and info.backend is Backend.EXTERNAL


@pytest.mark.asyncio
async def test_the_calls_of_one_run_stay_in_its_session(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        seen = []
        for _ in range(2):
            call = await ask(session)
            request = await gw.next_request()
            seen.append(request.session_id)
            gw.broker.answer(request.request_id, Decision.deny("no"))
            await asyncio.wait_for(call, WAIT)
    assert seen[0] == seen[1]


@pytest.mark.asyncio
async def test_the_run_works_in_the_clients_first_folder(gw: Fixture, tmp_path: Path) -> None:
    first, second = tmp_path / "my project", tmp_path / "other"
    request = await one_request(gw, roots=[str(first), str(second)])
    assert request.cwd == str(first)
    assert gw.hub.session(request.session_id).cwd == str(first)


@pytest.mark.asyncio
async def test_a_client_without_folders_has_no_working_folder(gw: Fixture) -> None:
    request = await one_request(gw, roots=[])
    assert not request.cwd
    request = await one_request(gw)  # no roots capability at all
    assert not request.cwd
