"""Every way in reads the CLI's suggestions through the one parser and the one check: a
malformed suggestion is dropped with a log line, the good one is offered, and the person
is still asked — for an SDK session, a terminal agent's hook and the MCP gateway alike.

Each way in is the real thing: the Qoder SDK on a scripted peer, the hook command as a
process against the terminal hook server, an MCP client against the gateway.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from helpers.broker_events import route_broker_events
from helpers.gateway_rig import TOKEN, mcp_client, unused_factory
from helpers.qoder_harness import QoderHarness

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision
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

WayIn = Callable[[Path, Database], Awaitable[tuple[ApprovalRequest, Backend]]]
"""Ask through one way in with `SUGGESTIONS`: the request a person saw, and the backend
that way in's sessions have."""


async def _sdk_session(tmp_path: Path, db: Database) -> tuple[ApprovalRequest, Backend]:
    harness = QoderHarness.open(tmp_path / "sdk")
    try:
        _, peer = await harness.start()
        peer.ask("Bash", {"command": "make"}, suggestions=SUGGESTIONS)
        request = await harness.next_request()
        harness.broker.answer(request.request_id, Decision.deny("Not now."))
        return request, Backend.QODER
    finally:
        await harness.close()


def _app_side(db: Database) -> tuple[ApprovalBroker, SessionHub, asyncio.Queue[ApprovalRequest]]:
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, unused_factory)
    added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    route_broker_events(broker, added, asyncio.Queue())
    return broker, hub, added


async def _terminal_hook(tmp_path: Path, db: Database) -> tuple[ApprovalRequest, Backend]:
    broker, hub, added = _app_side(db)
    event = {"hook_event_name": "PermissionRequest", "session_id": "s-1", "cwd": str(tmp_path),
             "permission_mode": "default", "tool_name": "Bash",
             "tool_input": {"command": "make"}, "permission_suggestions": SUGGESTIONS}
    async with TerminalHookServer(broker, hub, follow_transcripts=False):
        hook = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "qoder_desktop", "hook", "permission-request", "--agent",
            "claude", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        assert hook.stdin is not None
        hook.stdin.write(json.dumps(event).encode())
        hook.stdin.close()
        request = await asyncio.wait_for(added.get(), WAIT)
        broker.answer(request.request_id, Decision.deny("Not now."))
        out, _err = await asyncio.wait_for(hook.communicate(), WAIT)
        assert json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    return request, Backend.TERMINAL


async def _gateway(tmp_path: Path, db: Database) -> tuple[ApprovalRequest, Backend]:
    broker, hub, added = _app_side(db)
    async with ApprovalGateway(broker, hub, TOKEN, port=0) as gateway, \
            mcp_client(gateway.url) as client:
        call = asyncio.create_task(client.call_tool("approve", {
            "tool_name": "Bash", "input": {"command": "make"}, "tool_use_id": "toolu_1",
            "permission_suggestions": SUGGESTIONS}))
        request = await asyncio.wait_for(added.get(), WAIT)
        broker.answer(request.request_id, Decision.deny("Not now."))
        result = await asyncio.wait_for(call, WAIT)
        assert json.loads(result.content[0].text)["behavior"] == "deny"  # type: ignore[union-attr]
    return request, Backend.EXTERNAL


WAYS_IN: dict[str, WayIn] = {"sdk session": _sdk_session, "terminal hook": _terminal_hook,
                             "gateway": _gateway}


@pytest.mark.parametrize("way_in", list(WAYS_IN))
async def test_a_malformed_suggestion_is_dropped_with_a_log_line_and_the_person_asked(
        way_in: str, tmp_path: Path, db: Database, caplog: pytest.LogCaptureFixture) -> None:
    request, backend = await WAYS_IN[way_in](tmp_path, db)
    assert request.backend is backend
    assert [suggestion.to_wire() for suggestion in request.suggestions] == [GOOD]
    assert caplog.text.count("ignored a malformed permission suggestion") == len(MALFORMED)
    assert "without behavior" in caplog.text
