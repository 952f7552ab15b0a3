"""The real Claude Code CLI, started the way a person would start it in a terminal,
hands its permission prompts to the gateway: ``claude -p ... --permission-prompt-tool
mcp__qoder-desktop__approve --mcp-config <file>``.

Offline: the CLI talks to the scripted model (``build_cli_env``: its own temporary
config dir, proxies pointing at a closed loopback port) and to the gateway, both on
127.0.0.1. Requests are answered through the broker, as the dialogs would. Every CLI
run has a hard timeout, runs in its own process group, and is checked to be gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import claude_agent_sdk
import pytest
import pytest_asyncio
from helpers.broker_events import route_broker_events
from helpers.cli_processes import assert_no_cli_left

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.gateway.contract import PERMISSION_PROMPT_TOOL, mcp_config
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.scripted_model import ThreadedScriptedModel, build_cli_env
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

TIMEOUT = 60.0
TOKEN = "e2e-gateway-token-abcdefghijklmnop"
BUNDLED_CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]

BASH_INPUT = {"command": "echo hello > hello.txt", "description": "Write hello into hello.txt"}


@dataclass
class Rig:
    """The gateway with a broker behind it, a workspace, and the CLI's config dir."""

    gateway: ApprovalGateway
    broker: ApprovalBroker
    hub: SessionHub
    ledger: Ledger
    model: ThreadedScriptedModel
    workspace: Path
    config_dir: Path
    added: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[tuple[BrokerEvent, ApprovalRequest, Decision | None]] = field(
        default_factory=asyncio.Queue)

    async def next_request(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.added.get(), TIMEOUT)

    async def next_finished(self) -> tuple[BrokerEvent, ApprovalRequest, Decision | None]:
        return await asyncio.wait_for(self.finished.get(), TIMEOUT)

    async def start_cli(self, token: str | None, scenario: str = "bash"
                        ) -> asyncio.subprocess.Process:
        """``claude -p`` with our flags, as a person would type it (token None: no header)."""
        config = mcp_config(self.gateway.url, token)
        if token is None:
            del config["mcpServers"]["qoder-desktop"]["headers"]  # type: ignore[index]
        config_file = self.workspace.parent / "qoder-desktop.json"
        config_file.write_text(json.dumps(config), encoding="utf-8")
        env = {**os.environ, **build_cli_env(self.model.base_url, self.config_dir,
                                             scenario=scenario)}
        return await asyncio.create_subprocess_exec(
            str(BUNDLED_CLI), "-p", "Go ahead.",
            "--permission-prompt-tool", PERMISSION_PROMPT_TOOL,
            "--mcp-config", str(config_file), "--strict-mcp-config",
            "--setting-sources", "", "--output-format", "json",
            cwd=self.workspace, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)

    async def finish(self, process: asyncio.subprocess.Process) -> tuple[int, str, str]:
        """Wait (bounded) for the CLI to exit; (returncode, stdout, stderr)."""
        try:
            out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
        finally:
            _kill(process)
        assert process.returncode is not None
        return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the CLI's process group (ours only) if it is still running."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)





@pytest_asyncio.fixture
async def rig(tmp_path: Path, db: Database,
              scripted_model: ThreadedScriptedModel) -> AsyncIterator[Rig]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config_dir = tmp_path / "claude-config"
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, lambda *args: None)  # type: ignore[arg-type,return-value]
    gateway = ApprovalGateway(broker, hub, TOKEN, port=0)
    rig = Rig(gateway, broker, hub, ledger, scripted_model, workspace, config_dir)

    route_broker_events(broker, rig.added, rig.finished)
    await gateway.start()
    try:
        yield rig
    finally:
        await gateway.stop()
        await assert_no_cli_left(config_dir)


def _results_for(model: ThreadedScriptedModel, tool_use_id: str | None) -> list[str]:
    return [r.content for r in model.tool_results if r.tool_use_id == tool_use_id]


@pytest.mark.asyncio
async def test_approve_in_qoder_desktop_runs_the_tool(rig: Rig) -> None:
    process = await rig.start_cli(TOKEN)
    try:
        request = await rig.next_request()
        assert (request.tool_name, request.tool_input) == ("Bash", BASH_INPUT)
        assert request.backend is Backend.EXTERNAL
        assert request.session_name.startswith("claude-code ")
        assert request.cwd == str(rig.workspace)  # from the CLI's MCP roots
        rig.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    finally:
        code, out, err = await rig.finish(process)
    assert code == 0, err
    assert (rig.workspace / "hello.txt").read_text() == "hello\n"
    assert json.loads(out)["result"] == 'Created hello.txt with the text "hello".'
    assert _results_for(rig.model, request.tool_use_id) == ["(Bash completed with no output)"]
    session = rig.hub.session(request.session_id)
    assert session.backend is Backend.EXTERNAL and session.name == request.session_name
    [entry] = rig.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.ALLOW_ONCE


@pytest.mark.asyncio
async def test_an_edited_input_is_what_runs(rig: Rig) -> None:
    process = await rig.start_cli(TOKEN)
    try:
        request = await rig.next_request()
        rig.broker.answer(request.request_id,
                          Decision.allow_once({"command": "echo edited > edited.txt"}))
    finally:
        code, _, err = await rig.finish(process)
    assert code == 0, err
    assert (rig.workspace / "edited.txt").read_text() == "edited\n"
    assert not (rig.workspace / "hello.txt").exists()


@pytest.mark.asyncio
async def test_deny_in_qoder_desktop_tells_the_model_why(rig: Rig) -> None:
    process = await rig.start_cli(TOKEN)
    try:
        request = await rig.next_request()
        rig.broker.answer(request.request_id, Decision.deny("No files today, thanks."))
    finally:
        code, out, err = await rig.finish(process)
    assert code == 0, err
    assert not (rig.workspace / "hello.txt").exists()
    [record] = [r for r in rig.model.tool_results if r.tool_use_id == request.tool_use_id]
    assert record.is_error and record.content == "No files today, thanks."
    assert json.loads(out)["permission_denials"][0]["tool_name"] == "Bash"


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
