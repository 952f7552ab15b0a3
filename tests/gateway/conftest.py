"""The gateway tests' fixture: a gateway on port 0 over a fresh database."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import route_broker_events
from helpers.gateway_rig import TOKEN, Fixture

from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.store.database import Database


@pytest_asyncio.fixture
async def gw(db: Database) -> AsyncIterator[Fixture]:
    """A started gateway whose broker's events are queued on the fixture."""
    ledger, broker, hub = app_side(db)
    gateway = ApprovalGateway(broker, hub, TOKEN, port=0, keepalive_seconds=0.2)
    fixture = Fixture(gateway, broker, hub, db, ledger)

    route_broker_events(broker, fixture.added, fixture.finished)
    await gateway.start()
    try:
        yield fixture
    finally:
        await gateway.stop()
