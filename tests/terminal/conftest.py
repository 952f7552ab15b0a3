"""Fixtures for the terminal hook tests (the real CLI, the app side on the test loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.broker_events import route_broker_events
from helpers.cli_processes import assert_no_cli_left
from helpers.terminal_rig import TerminalRig, install_hook

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.scripted_model import ThreadedScriptedModel
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.terminal.server import TerminalHookServer


@pytest.fixture
def wait_seconds() -> float:
    """How long the app waits for a person (override per test)."""
    return 120.0


@pytest_asyncio.fixture
async def rig(tmp_path: Path, db: Database, scripted_model: ThreadedScriptedModel,
              wait_seconds: float) -> AsyncIterator[TerminalRig]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config_dir = tmp_path / "claude-config"
    install_hook(config_dir)
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, lambda *args: None)  # type: ignore[arg-type,return-value]
    server = TerminalHookServer(broker, hub, wait_seconds=wait_seconds)
    rig = TerminalRig(server, broker, hub, ledger, scripted_model, workspace, config_dir)
    route_broker_events(broker, rig.added, rig.finished)
    await server.start()
    try:
        yield rig
    finally:
        await server.stop()
        await assert_no_cli_left(config_dir)
