"""A running approval gateway for tests: its broker's events, an MCP client, results."""

from __future__ import annotations

import asyncio
import json
from contextlib import AbstractAsyncContextManager
from typing import Any

from helpers import gateway_client
from mcp import types
from mcp.client.session import ClientSession

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
)
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

TOKEN = "test-gateway-token-0123456789abcdef"
WAIT = 10.0
BASH = {"tool_name": "Bash", "input": {"command": "rm -r build"}, "tool_use_id": "toolu_1"}


class Fixture:
    """A running gateway and what its broker was asked."""

    def __init__(self, gateway: ApprovalGateway, broker: ApprovalBroker, hub: SessionHub,
                 db: Database, ledger: Ledger) -> None:
        self.gateway, self.broker, self.hub, self.db, self.ledger = gateway, broker, hub, db, ledger
        self.added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
        self.finished: asyncio.Queue[tuple[BrokerEvent, ApprovalRequest, Decision | None]] = (
            asyncio.Queue())

    async def next_request(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.added.get(), WAIT)

    async def next_finished(self) -> tuple[BrokerEvent, ApprovalRequest, Decision | None]:
        return await asyncio.wait_for(self.finished.get(), WAIT)


def mcp_client(url: str, *, token: str = TOKEN, **options: Any
               ) -> AbstractAsyncContextManager[ClientSession]:
    """An initialized MCP client session against the gateway (`helpers.gateway_client`)."""
    return gateway_client.mcp_client(url, token, **options)


def result_of(call: types.CallToolResult) -> dict[str, Any]:
    """The JSON answer of a successful `approve` call."""
    assert not call.isError, call
    assert len(call.content) == 1 and isinstance(call.content[0], types.TextContent)
    return json.loads(call.content[0].text)


async def ask(session: ClientSession, arguments: Any = None,
               **kwargs: Any) -> asyncio.Task[types.CallToolResult]:
    """Start an `approve` call (the Bash request unless `arguments` are given)."""
    return asyncio.create_task(session.call_tool("approve", BASH if arguments is None
                                                 else arguments, **kwargs))
