"""The Qoder protocol tests' harness: a fresh database, broker and hub per test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from helpers.qoder_harness import QoderHarness


@pytest_asyncio.fixture
async def harness(tmp_path: Path) -> AsyncIterator[QoderHarness]:
    """A fresh database, broker and hub; Qoder sessions run against scripted peers."""
    harness = QoderHarness.open(tmp_path)
    try:
        yield harness
    finally:
        await harness.close()
