"""Fixtures for the terminal hook tests (the real CLI, the app side on the test loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.terminal_rig import TerminalRig, open_terminal_rig

from qoder_desktop.scripted_model import ThreadedScriptedModel
from qoder_desktop.store.database import Database


@pytest.fixture
def wait_seconds() -> float:
    """How long the app waits for a person (override per test)."""
    return 120.0


@pytest_asyncio.fixture
async def rig(tmp_path: Path, db: Database, scripted_model: ThreadedScriptedModel,
              wait_seconds: float) -> AsyncIterator[TerminalRig]:
    """A started terminal hook server, our hook installed for the CLI (`open_terminal_rig`)."""
    async with open_terminal_rig(tmp_path, db, scripted_model, wait_seconds) as opened:
        yield opened
