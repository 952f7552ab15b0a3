"""The remote host's transcript, followed by its hook: the desk cannot read the host's
files, so the hook there follows the transcript while it waits. When the CLI writes the
result of its call (the person answered in the terminal) the desk's request ends as
withdrawn and the hook prints nothing; and the lines the desk shows of the session (the
recent ones, then what is appended) come over the same connection, each shown once.
Real sshd, the app's real tunnel, the hook run as the host's user."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.remote_desk import Desk
from helpers.remote_hook import finish_hook, permission_event, start_hook
from helpers.sshd import SshHost

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Decision, DecisionKind
from qoder_desktop.remote.serving import RemoteHooks, registered_endpoints
from qoder_desktop.remote.tunnel import TunnelState
from qoder_desktop.store.database import Database
from qoder_desktop.terminal.hook_lines import ANSWERED_IN_TERMINAL
from qoder_desktop.terminal.remote_transcript import GAP_NOTE

TIMEOUT = 30.0
WITHDRAWN_WITHIN = 10.0
"""Far below the desk's wait (180 s): the withdrawal comes from the transcript."""
SESSION = "5f2c1e9a-remote"
COMMAND = "make deploy"


@dataclass
class Served:
    """The desk serving the rig's host over its tunnel."""

    host: SshHost
    broker: ApprovalBroker
    hub: SessionHub
    requests: asyncio.Queue[ApprovalRequest]
    finished: asyncio.Queue[Finished]

    def hook(self) -> list[str]:
        """The hook command `remote add` put in the host user's Claude settings, run
        over ssh as that user."""
        settings = self.host.user.home / ".claude" / "settings.json"
        groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["PermissionRequest"]
        return self.host.ssh(str(groups[0]["hooks"][0]["command"]))

    def transcript(self, *entries: dict[str, Any]) -> Path:
        """The session's transcript on the host, as the CLI writes it, with `entries`."""
        text = "".join(json.dumps(entry) + "\n" for entry in entries)
        return self.host.user.write(f".claude/projects/-srv-project/{SESSION}.jsonl", text)

    def event(self, transcript: Path) -> dict[str, Any]:
        return {**permission_event(SESSION, COMMAND), "transcript_path": str(transcript)}


def tool_use(tool_use_id: str, command: str = COMMAND) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_use_id, "name": "Bash",
         "input": {"command": command}}]}}


def tool_result(tool_use_id: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_use_id, "content": "done"}]}}


def prompt(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}}


def said(text: str) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": text}]}}


def append(path: Path, entry: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as stream:  # the file stays the user's
        stream.write(json.dumps(entry) + "\n")


@pytest_asyncio.fixture
async def served(desk: Desk, db: Database) -> AsyncIterator[Served]:
    assert desk.remote("add", desk.host.alias, "--agent", "claude") == 0
    endpoints, problems = registered_endpoints(desk.registry, desk.store)
    assert problems == []
    _ledger, broker, hub = app_side(db)
    served = Served(desk.host, broker, hub, asyncio.Queue(), asyncio.Queue())
    route_broker_events(broker, served.requests, served.finished)
    connected = asyncio.Event()
    remote = RemoteHooks(broker, hub, on_status=lambda status: connected.set() if (
        status.state is TunnelState.CONNECTED) else None)
    assert await remote.start(endpoints) == []
    try:
        await asyncio.wait_for(connected.wait(), TIMEOUT)
        yield served
    finally:
        await remote.stop()


@pytest.mark.asyncio
async def test_an_answer_in_the_terminal_withdraws_the_desks_request(served: Served) -> None:
    transcript = served.transcript(tool_use("toolu_ours"))
    hook = await start_hook(served.hook(), served.event(transcript))
    request = await asyncio.wait_for(served.requests.get(), TIMEOUT)

    append(transcript, tool_result("toolu_ours"))  # the person said Yes in the terminal
    event, ended, decision = await asyncio.wait_for(served.finished.get(), WITHDRAWN_WITHIN)
    run = await finish_hook(hook)

    assert ended.request_id == request.request_id
    assert event is BrokerEvent.WITHDRAWN
    assert decision is not None and decision.kind is DecisionKind.WITHDRAWN
    assert decision.message == ANSWERED_IN_TERMINAL
    assert run.returncode == 0
    assert run.stdout == ""  # nothing allowed: the terminal's own answer stands


@pytest.mark.asyncio
async def test_an_earlier_identical_calls_result_does_not_withdraw(served: Served) -> None:
    transcript = served.transcript(tool_use("toolu_before"), tool_result("toolu_before"),
                                   tool_use("toolu_ours"))
    hook = await start_hook(served.hook(), served.event(transcript))
    request = await asyncio.wait_for(served.requests.get(), TIMEOUT)
    append(transcript, tool_result("toolu_someone_else"))

    served.broker.answer(request.request_id, Decision.deny("Not from here."))
    run = await finish_hook(hook)

    assert run.decision == {"behavior": "deny", "message": "Not from here."}


@pytest.mark.asyncio
async def test_the_desk_shows_the_hosts_transcript_once_while_its_hook_waits(
        served: Served) -> None:
    history = [prompt(f"prompt {number}") for number in range(80)]
    transcript = served.transcript(*history, tool_use("toolu_one"))
    hook = await start_hook(served.hook(), served.event(transcript))
    request = await asyncio.wait_for(served.requests.get(), TIMEOUT)

    def texts() -> list[str]:
        return [line.text for line in served.hub.transcript(request.session_id)]

    async def shown(text: str) -> None:
        async with asyncio.timeout(TIMEOUT):
            while not any(text in line for line in texts()):
                await asyncio.sleep(0.05)

    await shown("make deploy")  # the call the desk asks about
    assert texts()[0] == GAP_NOTE  # the long history is not sent...
    assert "prompt 79" in texts() and "prompt 0" not in texts()  # ...only its last lines
    append(transcript, said("Checking the deploy target."))
    await shown("Checking the deploy target.")  # appended while the hook waits
    served.broker.answer(request.request_id, Decision.deny("Not yet."))
    assert (await finish_hook(hook)).decision == {"behavior": "deny", "message": "Not yet."}

    append(transcript, tool_use("toolu_two", "make deploy-again"))
    second = await start_hook(served.hook(), {**served.event(transcript),
                                              "tool_input": {"command": "make deploy-again"}})
    again = await asyncio.wait_for(served.requests.get(), TIMEOUT)
    assert again.session_id == request.session_id
    await shown("make deploy-again")
    served.broker.answer(again.request_id, Decision.deny("Still no."))
    await finish_hook(second)

    lines = texts()
    assert lines.count("Checking the deploy target.") == 1  # each line shown once
    assert lines.count("prompt 79") == 1
    assert lines.count(GAP_NOTE) == 1
