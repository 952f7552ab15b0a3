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

WAIT = 10.0


@asynccontextmanager
async def mcp_client(url: str, token: str, *, name: str = "test-agent"
                     ) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session against the gateway at `url`."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=httpx.Timeout(10, read=2.0)) as http, \
            streamable_http_client(url, http_client=http) as (read, write, _), \
            ClientSession(read, write, timedelta(seconds=3 * WAIT),
                          client_info=types.Implementation(name=name, version="1.0")
                          ) as session:
        await session.initialize()
        yield session


def tool_result(call: types.CallToolResult) -> dict[str, Any]:
    """The permission result the gateway answered with."""
    assert not call.isError, call
    assert len(call.content) == 1 and isinstance(call.content[0], types.TextContent)
    result: dict[str, Any] = json.loads(call.content[0].text)
    return result
