"""The three ways in side by side, each the real thing: the Qoder SDK on a scripted peer
(an in-app session), the hook command as a process against the terminal hook server,
an MCP client against the gateway.

Each reads the CLI's suggestions through the one parser and the one check (a malformed
suggestion is dropped with a log line, the good one offered, the person still asked),
and each takes a request back the one way when its agent gives up (the broker records
it once, as withdrawn).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.gateway_rig import TOKEN, mcp_client
from helpers.hook_command import start_hook
from helpers.qoder_harness import QoderHarness

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.terminal.server import TerminalHookServer

pytestmark = pytest.mark.asyncio

WAIT = 30.0
GOOD = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make"}],
        "behavior": "allow", "destination": "session"}
MALFORMED = [
    {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make"}],
     "destination": "session"},  # no behavior: the CLI would drop the whole answer's updates
    {"type": "launchMissiles", "destination": "session"},
    "garbage",
]
SUGGESTIONS = [MALFORMED[0], GOOD, *MALFORMED[1:]]


@dataclass
class WayIn:
    """One way in, running: its broker and ledger, how its agent asks, how it gives up."""

    backend: Backend
    broker: ApprovalBroker
    ledger: Ledger
    ask: Callable[[list[Any]], Any]
    """Start a prompt with these suggestions (returns at once)."""
    give_up: Callable[[], Any]
    """The agent stops waiting (returns at once or is awaited)."""
    added: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[Finished] = field(default_factory=asyncio.Queue)

    def __post_init__(self) -> None:
        route_broker_events(self.broker, self.added, self.finished)

    async def shown(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.added.get(), WAIT)

    async def next_finished(self) -> Finished:
        return await asyncio.wait_for(self.finished.get(), WAIT)


@contextlib.asynccontextmanager
async def sdk_session(tmp_path: Path, db: Database) -> AsyncIterator[WayIn]:
    harness = QoderHarness.open(tmp_path / "sdk")
    try:
        _, peer = await harness.start()
        asked: list[Any] = []
        yield WayIn(Backend.QODER, harness.broker, harness.ledger,
                    ask=lambda suggestions: asked.append(
                        peer.ask("Bash", {"command": "make"}, suggestions=suggestions)),
                    give_up=lambda: peer.cancel(asked[-1].request_id))
    finally:
        await harness.close()


@contextlib.asynccontextmanager
async def terminal_hook(tmp_path: Path, db: Database) -> AsyncIterator[WayIn]:
    ledger, broker, hub = app_side(db)
    hooks: list[asyncio.subprocess.Process] = []

    async def ask(suggestions: list[Any]) -> None:
        event = {"hook_event_name": "PermissionRequest", "session_id": "s-1",
                 "cwd": str(tmp_path), "permission_mode": "default", "tool_name": "Bash",
                 "tool_input": {"command": "make"}, "permission_suggestions": suggestions}
        hooks.append(await start_hook(event))

    async with TerminalHookServer(broker, hub, follow_transcripts=False):
        try:
            yield WayIn(Backend.TERMINAL, broker, ledger, ask=ask,  # the person said No there:
                        give_up=lambda: hooks[-1].send_signal(signal.SIGTERM))
        finally:
            for hook in hooks:
                await asyncio.wait_for(hook.communicate(), WAIT)


@contextlib.asynccontextmanager
async def gateway(tmp_path: Path, db: Database) -> AsyncIterator[WayIn]:
    ledger, broker, hub = app_side(db)
    calls: list[asyncio.Task[Any]] = []
    async with ApprovalGateway(broker, hub, TOKEN, port=0) as server, \
            mcp_client(server.url) as client:

        def ask(suggestions: list[Any]) -> None:
            calls.append(asyncio.create_task(client.call_tool("approve", {
                "tool_name": "Bash", "input": {"command": "make"}, "tool_use_id": "toolu_1",
                "permission_suggestions": suggestions})))

        try:
            yield WayIn(Backend.EXTERNAL, broker, ledger, ask=ask,
                        give_up=lambda: calls[-1].cancel())  # stops waiting, hangs up
        finally:
            await asyncio.gather(*calls, return_exceptions=True)


WAYS_IN = {"sdk session": sdk_session, "terminal hook": terminal_hook, "gateway": gateway}


async def _asked(way_in: WayIn, suggestions: list[Any]) -> ApprovalRequest:
    started = way_in.ask(suggestions)
    if asyncio.iscoroutine(started):
        await started
    return await way_in.shown()


@pytest.mark.parametrize("name", list(WAYS_IN))
async def test_a_malformed_suggestion_is_dropped_with_a_log_line_and_the_person_asked(
        name: str, tmp_path: Path, db: Database, caplog: pytest.LogCaptureFixture) -> None:
    async with WAYS_IN[name](tmp_path, db) as way_in:
        request = await _asked(way_in, SUGGESTIONS)
        way_in.broker.answer(request.request_id, Decision.deny("Not now."))
        await way_in.next_finished()
    assert request.backend is way_in.backend
    assert [suggestion.to_wire() for suggestion in request.suggestions] == [GOOD]
    assert caplog.text.count("ignored a malformed permission suggestion") == len(MALFORMED)
    assert "without behavior" in caplog.text


@pytest.mark.parametrize("name", list(WAYS_IN))
async def test_an_agent_that_gives_up_withdraws_its_request_once(
        name: str, tmp_path: Path, db: Database) -> None:
    async with WAYS_IN[name](tmp_path, db) as way_in:
        request = await _asked(way_in, [GOOD])
        way_in.give_up()
        event, finished, decision = await way_in.next_finished()
        assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
        assert decision is not None and decision.kind is DecisionKind.WITHDRAWN
        assert not way_in.broker.is_pending(request.request_id)
        await _until(lambda: [entry.outcome for entry in way_in.ledger.entries(
            request.session_id, include_tool_events=False)] == [DecisionKind.WITHDRAWN])
        assert way_in.finished.empty()  # told once


async def _until(condition: Callable[[], bool]) -> None:
    """Wait (on the loop) until `condition` holds: the broker writes a withdrawal after
    telling its subscribers."""
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(poll(), WAIT)
