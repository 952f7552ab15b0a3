"""A real MCP client (the `mcp` SDK) for the approval gateway, as an agent run uses it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import FileUrl

WAIT = 10.0


@asynccontextmanager
async def mcp_client(url: str, token: str, *, name: str = "test-agent", version: str = "1.0",
                     terminate_on_close: bool = True, roots: list[str] | None = None
                     ) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session against the gateway at `url`.

    Every request times out (a failure, not a hang) if the gateway never answers, e.g.
    because its MCP session died on the loop. `roots`: the folders the client offers.
    """

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=FileUrl(f"file://{root}")) for root in roots or ()])

    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=httpx.Timeout(10, read=2.0)) as http, \
            streamable_http_client(url, http_client=http,
                                   terminate_on_close=terminate_on_close) as (read, write, _), \
            ClientSession(read, write, timedelta(seconds=3 * WAIT),
                          client_info=types.Implementation(name=name, version=version),
                          list_roots_callback=list_roots if roots is not None else None
                          ) as session:
        await session.initialize()
        yield session


def tool_result(call: types.CallToolResult) -> dict[str, Any]:
    """The permission result the gateway answered with."""
    assert not call.isError, call
    assert len(call.content) == 1 and isinstance(call.content[0], types.TextContent)
    result: dict[str, Any] = json.loads(call.content[0].text)
    return result
