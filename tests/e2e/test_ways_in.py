"""Every way in answers the same: the agent asks Qoder Desktop, and what the person
decides is what happens. Three ways: the app starts Claude Code itself through the SDK
(``sdk``), or a person starts the real CLI in a terminal and it asks through the
installed PermissionRequest hook (``hook``) or through the MCP approval gateway
(``gateway``). One shape for all three (`Way`); what only one way does stays in
tests/e2e/test_claude_sessions.py, tests/terminal/test_hook_e2e.py and
tests/gateway/test_gateway_e2e.py.

Offline: the scripted model and the app's servers on 127.0.0.1; requests are answered
through the broker, as the dialogs would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.claude_harness import Harness
from helpers.cli_rig import BUNDLED_CLI, CliRig
from helpers.gateway_cli_rig import open_gateway_rig
from helpers.terminal_rig import open_terminal_rig

from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.domain.session_options import TranscriptKind
from qoder_desktop.scripted_model import ThreadedScriptedModel
from qoder_desktop.store.database import Database

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]

BASH_INPUT = {"command": "echo hello > hello.txt", "description": "Write hello into hello.txt"}


@dataclass
class Ended:
    """How the agent's run ended, as its way in tells it."""

    ok: bool
    why: str
    final_text: str
    denied_tools: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


class Way:
    """One way in, as the shared tests drive it: start the agent on the "bash" scenario,
    answer its requests through the broker, see how it ended."""

    name: str
    backend: Backend

    def __init__(self, name: str, backend: Backend, *, broker: Any, hub: Any, ledger: Any,
                 workspace: Path, model: ThreadedScriptedModel) -> None:
        self.name, self.backend = name, backend
        self.broker, self.hub, self.ledger = broker, hub, ledger
        self.workspace, self.model = workspace, model
        self.first_result = len(model.tool_results)

    async def begin(self) -> None:
        """Start the agent."""
        raise NotImplementedError

    async def next_request(self) -> ApprovalRequest:
        """The next request that waits for a person."""
        raise NotImplementedError

    async def end(self) -> Ended:
        """Wait (bounded) for the agent's turn to end."""
        raise NotImplementedError

    def results(self, tool_use_id: str | None) -> list[Any]:
        """The tool results the model saw in this test, for `tool_use_id` when the way
        in knows the call's id (a hook's request does not carry it: then all of them)."""
        return [r for r in self.model.tool_results[self.first_result:]
                if tool_use_id is None or r.tool_use_id == tool_use_id]


class CliWay(Way):
    """The real CLI started in a terminal, through one of `helpers.cli_rig`'s rigs."""

    def __init__(self, name: str, rig: CliRig) -> None:
        super().__init__(name, rig.backend, broker=rig.broker, hub=rig.hub, ledger=rig.ledger,
                         workspace=rig.workspace, model=rig.model)
        self.rig = rig
        self.first_result = rig.first_result
        self._process: asyncio.subprocess.Process | None = None

    async def begin(self) -> None:
        self._process = await self.rig.start_cli()

    async def next_request(self) -> ApprovalRequest:
        return await self.rig.next_request()

    async def end(self) -> Ended:
        assert self._process is not None
        code, result, err = await self.rig.finish(self._process)
        return Ended(code == 0, err, str(result.get("result", "")),
                     [d["tool_name"] for d in result.get("permission_denials", [])], result)


class SdkWay(Way):
    """The app starts Claude Code itself (the SDK, a hub session; `helpers.claude_harness`)."""

    def __init__(self, harness: Harness) -> None:
        super().__init__("sdk", Backend.CLAUDE, broker=harness.broker, hub=harness.hub,
                         ledger=harness.ledger, workspace=harness.workspace,
                         model=harness.model)
        self.harness = harness
        self.session_id = ""

    async def begin(self) -> None:
        self.session_id = await self.harness.start("bash")

    async def next_request(self) -> ApprovalRequest:
        return await self.harness.next_request()

    async def end(self) -> Ended:
        await self.harness.wait_idle()
        lines = self.hub.transcript(self.session_id)
        errors = [line.text for line in lines if line.kind is TranscriptKind.ERROR]
        said = [line.text for line in lines if line.kind is TranscriptKind.ASSISTANT_TEXT]
        return Ended(not errors, "\n".join(errors), said[-1] if said else "",
                     [line.tool_name or "" for line in lines
                      if line.kind is TranscriptKind.DENIAL])


Opener = Callable[[Path, Database, ThreadedScriptedModel],
                  AbstractAsyncContextManager[CliRig]]
CLI_WAYS: dict[str, Opener] = {"hook": open_terminal_rig, "gateway": open_gateway_rig}


@pytest_asyncio.fixture(params=["sdk", *sorted(CLI_WAYS)])
async def way(request: pytest.FixtureRequest, tmp_path: Path, db: Database,
              scripted_model: ThreadedScriptedModel, harness: Harness) -> AsyncIterator[Way]:
    """One way in, its app side started, with a workspace for the agent (the SDK way's
    is the e2e harness; the others leave it unused)."""
    if request.param == "sdk":
        yield SdkWay(harness)
        return
    folder = tmp_path / request.param  # (the harness has tmp_path/workspace)
    folder.mkdir()
    async with CLI_WAYS[request.param](folder, db, scripted_model) as rig:
        yield CliWay(request.param, rig)


def _session_is_the_ways(way: Way, request: ApprovalRequest, ended: Ended) -> None:
    """The session the request belongs to, as each way names it."""
    session = way.hub.session(request.session_id)
    assert session.backend is way.backend
    if way.name == "hook":  # the CLI's own session id, named for its folder
        assert session.session_id == ended.extra["session_id"]
        assert session.name == "Claude Code · workspace"
    elif way.name == "gateway":  # one session per MCP session, named by the client
        assert session.name == request.session_name
        assert request.session_name.startswith("claude-code ")
    else:  # started in the app, named as the person named it
        assert session.name == "bash"
    assert session.cwd == str(way.workspace)


@pytest.mark.asyncio
async def test_allow_in_qoder_desktop_runs_the_command(way: Way) -> None:
    await way.begin()
    try:
        request = await way.next_request()
        assert (request.tool_name, request.tool_input) == ("Bash", BASH_INPUT)
        assert request.backend is way.backend
        assert request.cwd == str(way.workspace)  # (the gateway: from the CLI's MCP roots)
        way.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    finally:
        ended = await way.end()
    assert ended.ok, ended.why
    assert (way.workspace / "hello.txt").read_text() == "hello\n"
    assert ended.denied_tools == []
    assert ended.final_text == 'Created hello.txt with the text "hello".'
    assert [r.content for r in way.results(request.tool_use_id)] == [
        "(Bash completed with no output)"]
    _session_is_the_ways(way, request, ended)
    [entry] = way.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.ALLOW_ONCE


@pytest.mark.asyncio
async def test_an_edited_input_is_what_runs(way: Way) -> None:
    await way.begin()
    try:
        request = await way.next_request()
        way.broker.answer(request.request_id,
                          Decision.allow_once({"command": "echo edited > edited.txt"}))
    finally:
        ended = await way.end()
    assert ended.ok, ended.why
    assert (way.workspace / "edited.txt").read_text() == "edited\n"
    assert not (way.workspace / "hello.txt").exists()


@pytest.mark.asyncio
async def test_deny_with_a_message_reaches_the_model(way: Way) -> None:
    await way.begin()
    try:
        request = await way.next_request()
        way.broker.answer(request.request_id, Decision.deny("No files today, thanks."))
    finally:
        ended = await way.end()
    assert ended.ok, ended.why
    assert not (way.workspace / "hello.txt").exists()
    [record] = way.results(request.tool_use_id)
    assert record.is_error and "No files today, thanks." in record.content
    assert ended.denied_tools == ["Bash"]
    [entry] = way.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.DENY
