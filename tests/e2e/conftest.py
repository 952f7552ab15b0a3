"""End-to-end harness: the real Claude Code CLI, the scripted model on loopback, our broker.

No GUI: a test answers requests through the broker, as the dialogs would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from helpers.broker_events import route_broker_events
from helpers.claude_harness import Harness

from qoder_desktop.agents.base import AgentSession
from qoder_desktop.agents.claude import ClaudeSession
from qoder_desktop.agents.hub import HubEvent, SessionHub
from qoder_desktop.agents.sink import SessionSink
from qoder_desktop.agents.transcript import INTERRUPTED_TEXT, STOPPED_TEXT
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import SessionInfo
from qoder_desktop.domain.session_options import SessionOptions, TranscriptKind
from qoder_desktop.scripted_model.cli_env import build_cli_env
from qoder_desktop.scripted_model.server import ThreadedScriptedModel
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


@pytest_asyncio.fixture
async def harness(tmp_path: Path, scripted_model: ThreadedScriptedModel) -> AsyncIterator[Harness]:
    """A fresh database, broker and hub per test, with a scratch workspace."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config_dir = tmp_path / "claude-config"
    db = Database.open(tmp_path / "ledger.sqlite3")
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)

    def factory(info: SessionInfo, options: SessionOptions, broker: ApprovalBroker,
                sink: SessionSink) -> AgentSession:
        env = build_cli_env(scripted_model.base_url, config_dir, scenario=options.scenario)
        return ClaudeSession(info, options, broker, sink, env=env)

    hub = SessionHub(db, ledger, broker, factory)
    harness = Harness(hub, broker, db, ledger, workspace, scripted_model)

    def on_hub(event: HubEvent) -> None:
        line = event.line
        if line is not None and (line.kind in (TranscriptKind.RESULT, TranscriptKind.ERROR)
                                 or line.text in (INTERRUPTED_TEXT, STOPPED_TEXT)):
            harness.idle.set()

    route_broker_events(broker, harness.requests, harness.finished)
    hub.subscribe(on_hub)
    try:
        yield harness
    finally:
        await hub.stop_all()
        db.close()
