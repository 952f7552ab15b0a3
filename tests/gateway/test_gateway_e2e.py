"""The real Claude Code CLI, started the way a person would start it in a terminal,
hands its permission prompts to the gateway: ``claude -p ... --permission-prompt-tool
mcp__qoder-desktop__approve --mcp-config <file>``.

Offline: the CLI talks to the scripted model (``build_cli_env``: its own temporary
config dir, proxies pointing at a closed loopback port) and to the gateway, both on
127.0.0.1. Requests are answered through the broker, as the dialogs would. Every CLI
run has a hard timeout, runs in its own process group, and is checked to be gone.
What every way in shares (allow, edit, deny) is tests/e2e/test_ways_in.py; here is what
only the gateway does.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.cli_rig import BUNDLED_CLI
from helpers.gateway_cli_rig import GATEWAY_TOKEN as TOKEN
from helpers.gateway_cli_rig import GatewayCliRig as Rig
from helpers.gateway_cli_rig import open_gateway_rig

from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.models import DecisionKind
from qoder_desktop.gateway.contract import PERMISSION_PROMPT_TOOL
from qoder_desktop.scripted_model import ThreadedScriptedModel
from qoder_desktop.store.database import Database

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]


@pytest_asyncio.fixture
async def rig(tmp_path: Path, db: Database,
              scripted_model: ThreadedScriptedModel) -> AsyncIterator[Rig]:
    """A started gateway with the real CLI pointed at it (`open_gateway_rig`)."""
    async with open_gateway_rig(tmp_path, db, scripted_model) as opened:
        yield opened


@pytest.mark.asyncio
async def test_an_agent_that_is_stopped_withdraws_its_request(rig: Rig) -> None:
    process = await rig.start_cli(TOKEN)
    try:
        request = await rig.next_request()
        os.killpg(process.pid, signal.SIGTERM)  # the person presses Ctrl+C in the terminal
        event, finished, decision = await rig.next_finished()
    finally:
        await rig.finish(process)
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert decision is not None and decision.kind is DecisionKind.WITHDRAWN
    assert not rig.broker.is_pending(request.request_id)
    assert not (rig.workspace / "hello.txt").exists()
    [entry] = rig.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.WITHDRAWN


@pytest.mark.parametrize("token", ["wrong-token", None], ids=["wrong-token", "no-token"])
@pytest.mark.asyncio
async def test_an_agent_without_the_token_is_refused_and_logged(
        rig: Rig, token: str | None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="qoder_desktop.gateway.server")
    code, _, err = await rig.finish(await rig.start_cli(token))
    assert code != 0
    assert f"{PERMISSION_PROMPT_TOOL} (passed via --permission-prompt-tool) not found" in err
    assert rig.gateway.refused >= 1
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refusals and all("from 127.0.0.1:" in text for text in refusals)
    assert "wrong-token" not in caplog.text and TOKEN not in caplog.text
    assert rig.added.empty()
    assert not (rig.workspace / "hello.txt").exists()
