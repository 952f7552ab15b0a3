"""The real Claude Code CLI on the "remote" host, as its user, in a terminal, with no
permission flags: after ``remote add`` its prompts ask through the desk over the app's
tunnel, and the person's answer at the desk reaches it."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import pwd
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.remote_desk import Desk
from helpers.terminal_rig import BUNDLED_CLI, PtyCli, seed_interactive_config

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.domain.session_options import TranscriptKind
from qoder_desktop.remote.serving import RemoteHooks, registered_endpoints
from qoder_desktop.remote.tunnel import TunnelState
from qoder_desktop.scripted_model import ThreadedScriptedModel, build_cli_env
from qoder_desktop.store.database import Database
from qoder_desktop.terminal.hook_lines import ANSWERED_IN_TERMINAL

TIMEOUT = 60.0

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]


@dataclass
class RemoteCli:
    """The desk serving the rig's host after `remote add`, and the host's user's CLI."""

    added: Desk
    broker: ApprovalBroker
    remote: RemoteHooks
    requests: asyncio.Queue[ApprovalRequest]
    model: ThreadedScriptedModel
    hub: SessionHub
    finished: asyncio.Queue[Finished]

    async def next_request(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.requests.get(), TIMEOUT)

    def start_cli(self, scenario: str = "bash") -> PtyCli:
        """``claude "Go ahead."`` in a terminal as the host's user, in a folder of its HOME,
        with its own ~/.claude (where `remote add` put our hook)."""
        user = self.added.host.user
        config = user.home / ".claude"
        workspace = user.home / "work"
        workspace.mkdir(exist_ok=True)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(user.home),
               "USER": user.name, "LOGNAME": user.name, "TERM": "xterm-256color",
               **build_cli_env(self.model.base_url, config, scenario=scenario)}
        seed_interactive_config(config, workspace, env["ANTHROPIC_API_KEY"])
        user.chown_tree(user.home)
        master, slave = pty.openpty()
        process = subprocess.Popen([str(BUNDLED_CLI), "Go ahead."], cwd=workspace, env=env,
                                   stdin=slave, stdout=slave, stderr=slave,
                                   start_new_session=True, user=user.uid,
                                   group=pwd.getpwnam(user.name).pw_gid, extra_groups=[])
        os.close(slave)
        return PtyCli(process, master)


def _ask_in_default_mode(added: Desk) -> None:
    """The host user's Claude settings ask on every call (as a person's would after the
    first run), next to the hook entry `remote add` wrote."""
    settings = added.host.user.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["permissions"] = {"defaultMode": "default"}
    added.host.user.write(".claude/settings.json", json.dumps(data))


@pytest_asyncio.fixture
async def remote_cli(desk: Desk, db: Database,
                     scripted_model: ThreadedScriptedModel) -> AsyncIterator[RemoteCli]:
    assert desk.remote("add", desk.host.alias, "--agent", "claude") == 0
    _ask_in_default_mode(desk)
    endpoints, problems = registered_endpoints(desk.registry, desk.store)
    assert problems == []
    _ledger, broker, hub = app_side(db)
    requests: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    finished: asyncio.Queue[Finished] = asyncio.Queue()
    route_broker_events(broker, requests, finished)
    connected = asyncio.Event()
    remote = RemoteHooks(broker, hub, on_status=lambda status: connected.set() if (
        status.state is TunnelState.CONNECTED) else None)
    assert await remote.start(endpoints) == []
    try:
        await asyncio.wait_for(connected.wait(), TIMEOUT)
        yield RemoteCli(desk, broker, remote, requests, scripted_model, hub, finished)
    finally:
        await remote.stop()


@pytest.mark.asyncio
async def test_an_allow_at_the_desk_runs_the_command_on_the_host(remote_cli: RemoteCli) -> None:
    made = remote_cli.added.host.user.home / "work" / "hello.txt"
    cli = remote_cli.start_cli()
    try:
        request = await remote_cli.next_request()
        remote_cli.broker.answer(request.request_id,
                                 Decision.allow_once(dict(request.tool_input)))
        await cli.wait_for("Allowed by PermissionRequest hook", TIMEOUT)
        async with asyncio.timeout(TIMEOUT):  # the file the allowed command writes
            while not made.exists():
                await asyncio.sleep(0.05)
    finally:
        cli.close()

    host = remote_cli.added.host
    assert request.host == host.alias
    assert request.session_name.startswith(f"{host.alias} · Claude Code")
    assert made.read_text() == "hello\n"


@pytest.mark.asyncio
async def test_a_deny_at_the_desk_reaches_the_cli_on_the_host(remote_cli: RemoteCli) -> None:
    cli = remote_cli.start_cli()
    try:
        request = await remote_cli.next_request()
        remote_cli.broker.answer(request.request_id, Decision.deny("Not on the box."))
        await cli.wait_for("Denied by PermissionRequest hook", TIMEOUT)
    finally:
        cli.close()

    assert not (remote_cli.added.host.user.home / "work" / "hello.txt").exists()


@pytest.mark.asyncio
async def test_an_edited_command_from_the_desk_is_what_runs_on_the_host(
        remote_cli: RemoteCli) -> None:
    made = remote_cli.added.host.user.home / "work" / "hello.txt"
    cli = remote_cli.start_cli()
    try:
        request = await remote_cli.next_request()
        edited = {**request.tool_input, "command": "echo edited at the desk > hello.txt"}
        remote_cli.broker.answer(request.request_id, Decision.allow_once(edited))
        async with asyncio.timeout(TIMEOUT):
            while not made.exists() or not made.read_text():
                await asyncio.sleep(0.05)
    finally:
        cli.close()

    assert made.read_text() == "edited at the desk\n"


@pytest.mark.asyncio
async def test_a_session_grant_from_the_desk_is_held_by_the_cli_on_the_host(
        remote_cli: RemoteCli) -> None:
    model = remote_cli.model
    before = len(model.tool_results)
    cli = remote_cli.start_cli("repeat_command")
    try:
        request = await remote_cli.next_request()
        grant = PermissionSuggestion(
            type="addRules", rules=(RuleValue(tool_name="Bash", rule_content="touch marker.txt"),),
            behavior=RuleBehavior.ALLOW, destination="session")
        remote_cli.broker.answer(request.request_id,
                                 Decision.allow_session(dict(request.tool_input), (grant,)))
        async with asyncio.timeout(TIMEOUT):  # both calls ran
            while len(model.tool_results) < before + 2:
                await asyncio.sleep(0.05)
    finally:
        cli.close()

    assert [r.is_error for r in model.tool_results[before:]] == [False, False]
    assert remote_cli.requests.empty()  # the second, identical call never asked the desk


@pytest.mark.asyncio
async def test_yes_in_the_hosts_terminal_closes_the_desks_dialog(remote_cli: RemoteCli) -> None:
    made = remote_cli.added.host.user.home / "work" / "hello.txt"
    cli = remote_cli.start_cli()
    try:
        request = await remote_cli.next_request()
        await cli.wait_for("Do you want to proceed?", TIMEOUT)  # the terminal asks too
        cli.type("1")  # "1. Yes" in the host's terminal
        event, finished, decision = await asyncio.wait_for(remote_cli.finished.get(), TIMEOUT)
        async with asyncio.timeout(TIMEOUT):
            while not made.exists():
                await asyncio.sleep(0.05)
    finally:
        cli.close()

    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert decision is not None and decision.message == ANSWERED_IN_TERMINAL
    shown = remote_cli.hub.transcript(request.session_id)  # streamed by the host's hook
    assert any(line.kind is TranscriptKind.USER_PROMPT and line.text == "Go ahead."
               for line in shown)
    assert any(line.kind is TranscriptKind.TOOL_CALL and "hello.txt" in line.text
               for line in shown)
