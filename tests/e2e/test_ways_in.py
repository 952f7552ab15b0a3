"""Every way in from a terminal answers the same: the real Claude Code CLI, started as a
person starts it, asks Qoder Desktop through the installed PermissionRequest hook
(``hook``) or through the MCP approval gateway (``gateway``); what the person decides is
what happens. One rig shape for both (`helpers.cli_rig`); what only one way does stays
in tests/terminal/test_hook_e2e.py and tests/gateway/test_gateway_e2e.py.

Offline: the scripted model and the app's server both on 127.0.0.1; requests are
answered through the broker, as the dialogs would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.cli_rig import BUNDLED_CLI, CliRig
from helpers.gateway_cli_rig import open_gateway_rig
from helpers.terminal_rig import open_terminal_rig

from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.scripted_model import ThreadedScriptedModel
from qoder_desktop.store.database import Database

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]

BASH_INPUT = {"command": "echo hello > hello.txt", "description": "Write hello into hello.txt"}

Opener = Callable[[Path, Database, ThreadedScriptedModel],
                  AbstractAsyncContextManager[CliRig]]
WAYS: dict[str, Opener] = {"hook": open_terminal_rig, "gateway": open_gateway_rig}


@pytest_asyncio.fixture(params=sorted(WAYS))
async def way(request: pytest.FixtureRequest, tmp_path: Path, db: Database,
              scripted_model: ThreadedScriptedModel) -> AsyncIterator[CliRig]:
    """The app side of one way in, started, with a workspace for the CLI."""
    async with WAYS[request.param](tmp_path, db, scripted_model) as opened:
        yield opened


def _session_is_the_ways(way: CliRig, request: ApprovalRequest,
                         result: dict[str, Any]) -> None:
    """The session the request belongs to, as each way names it."""
    session = way.hub.session(request.session_id)
    assert session.backend is way.backend
    if way.backend is Backend.TERMINAL:  # the CLI's own session id, named for its folder
        assert session.session_id == result["session_id"]
        assert session.name == "Claude Code · workspace"
        assert session.cwd == str(way.workspace)
    else:  # one session per MCP session, named by the client
        assert session.name == request.session_name
        assert request.session_name.startswith("claude-code ")


@pytest.mark.asyncio
async def test_allow_in_qoder_desktop_runs_the_command(way: CliRig) -> None:
    process = await way.start_cli()
    try:
        request = await way.next_request()
        assert (request.tool_name, request.tool_input) == ("Bash", BASH_INPUT)
        assert request.backend is way.backend
        assert request.cwd == str(way.workspace)  # (the gateway: from the CLI's MCP roots)
        way.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    finally:
        code, result, err = await way.finish(process)
    assert code == 0, err
    assert (way.workspace / "hello.txt").read_text() == "hello\n"
    assert result["permission_denials"] == []
    assert result["result"] == 'Created hello.txt with the text "hello".'
    assert [r.content for r in way.results(request.tool_use_id)] == [
        "(Bash completed with no output)"]
    _session_is_the_ways(way, request, result)
    [entry] = way.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.ALLOW_ONCE


@pytest.mark.asyncio
async def test_an_edited_input_is_what_runs(way: CliRig) -> None:
    process = await way.start_cli()
    try:
        request = await way.next_request()
        way.broker.answer(request.request_id,
                          Decision.allow_once({"command": "echo edited > edited.txt"}))
    finally:
        code, _result, err = await way.finish(process)
    assert code == 0, err
    assert (way.workspace / "edited.txt").read_text() == "edited\n"
    assert not (way.workspace / "hello.txt").exists()


@pytest.mark.asyncio
async def test_deny_with_a_message_reaches_the_model(way: CliRig) -> None:
    process = await way.start_cli()
    try:
        request = await way.next_request()
        way.broker.answer(request.request_id, Decision.deny("No files today, thanks."))
    finally:
        code, result, err = await way.finish(process)
    assert code == 0, err
    assert not (way.workspace / "hello.txt").exists()
    [record] = way.results(request.tool_use_id)
    assert record.is_error and "No files today, thanks." in record.content
    assert result["permission_denials"][0]["tool_name"] == "Bash"
    [entry] = way.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.DENY
