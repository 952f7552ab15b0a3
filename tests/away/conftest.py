"""The Away tests' fixture: Away mode running on 127.0.0.1 over a fresh database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from helpers.away_rig import AwayRig, away_rig

from qoder_desktop.store.database import Database


@pytest_asyncio.fixture
async def rig(db: Database, tmp_path: Path) -> AsyncIterator[AwayRig]:
    """Away mode on, with real TLS from the desk's own CA."""
    async with away_rig(db, tmp_path) as running:
        yield running
