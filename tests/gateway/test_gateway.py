"""The approval gateway with a real MCP client (the `mcp` SDK) and a real broker.

Each test starts the gateway on 127.0.0.1, port 0, with a broker, ledger and session
hub on a fresh database, and answers requests through the broker, as the dialogs would.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from helpers.app_side import app_side
from helpers.broker_events import route_broker_events
from helpers.gateway_rig import (
    BASH,
    TOKEN,
    WAIT,
    Fixture,
    ask,
    mcp_client,
    result_of,
)
from helpers.loop import settle
from mcp import types
from mcp.shared.exceptions import McpError

from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionRule,
)
from qoder_desktop.gateway.contract import (
    PERMISSION_PROMPT_TOOL,
    client_label,
    parse_arguments,
    permission_result,
)
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.store.database import Database

# -- the tool and its answers ---------------------------------------------------------


@pytest.mark.asyncio
async def test_the_tool_is_listed_as_approve(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        tools = (await session.list_tools()).tools
    assert [t.name for t in tools] == ["approve"]
    assert tools[0].inputSchema["required"] == ["tool_name", "input"]
    assert PERMISSION_PROMPT_TOOL == "mcp__qoder-desktop__approve"


@pytest.mark.asyncio
async def test_allow_returns_the_input_that_will_run(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        assert request.backend is Backend.EXTERNAL
        assert (request.tool_name, request.tool_input) == ("Bash", {"command": "rm -r build"})
        assert request.tool_use_id == "toolu_1"
        assert request.session_name == "test-agent 1.0"
        gw.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        result = result_of(await asyncio.wait_for(call, WAIT))
    assert result == {"behavior": "allow", "updatedInput": {"command": "rm -r build"}}
    [entry] = gw.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.ALLOW_ONCE and entry.backend is Backend.EXTERNAL


@pytest.mark.asyncio
async def test_allow_with_edited_input(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.allow_once({"command": "rm -r build/tmp"}))
        result = result_of(await asyncio.wait_for(call, WAIT))
    assert result == {"behavior": "allow", "updatedInput": {"command": "rm -r build/tmp"}}


@pytest.mark.asyncio
async def test_deny_carries_the_message(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.deny("Not the build folder, please."))
        result = result_of(await asyncio.wait_for(call, WAIT))
    assert result == {"behavior": "deny", "message": "Not the build folder, please."}


@pytest.mark.asyncio
async def test_deny_and_stop_sets_interrupt(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.deny("Stop here.", interrupt=True))
        result = result_of(await asyncio.wait_for(call, WAIT))
    assert result == {"behavior": "deny", "message": "Stop here.", "interrupt": True}


@pytest.mark.asyncio
async def test_allow_for_the_session_goes_to_the_agent_and_a_revoke_follows_it(
        gw: Fixture) -> None:
    """The CLI holds the grant; what it still asks about reaches a person."""
    grant = PermissionSuggestion(type="addRules", behavior=RuleBehavior.ALLOW,
                                 rules=(RuleValue.parse("Bash(rm -r build)"),),
                                 destination="localSettings")
    mode = PermissionSuggestion(type="setMode", mode="plan", destination="session")
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id,
                         Decision.allow_session(dict(request.tool_input), (grant, mode)))
        result = result_of(await asyncio.wait_for(call, WAIT))
        assert result == {"behavior": "allow", "updatedInput": {"command": "rm -r build"},
                          "updatedPermissions": [
                              {"type": "addRules", "destination": "session",
                               "rules": [{"toolName": "Bash", "ruleContent": "rm -r build"}],
                               "behavior": "allow"},
                              {"type": "setMode", "mode": "plan",
                               "destination": "session"}]}
        # The agent asks again although it holds the rule: a person decides, and the
        # request says which rule covers it.
        call = await ask(session)
        again = await gw.next_request()
        assert again.covered_by_rule == "Bash(rm -r build)"
        [rule] = gw.hub.rules(again.session_id)
        gw.hub.revoke_rule(rule.rule_id)
        assert [r.removal_pending for r in gw.hub.rules(again.session_id)] == [True]
        gw.broker.answer(again.request_id, Decision.allow_once(dict(again.tool_input)))
        after_revoke = result_of(await asyncio.wait_for(call, WAIT))
        # Sent once: the store says the removal was delivered, and the next allow is plain.
        [rule] = gw.hub.rules(again.session_id)
        assert not rule.removal_pending and rule.removal_delivered_at is not None
        call = await ask(session)
        third = await gw.next_request()
        gw.broker.answer(third.request_id, Decision.allow_once(dict(third.tool_input)))
        after_delivery = result_of(await asyncio.wait_for(call, WAIT))
    assert after_revoke["updatedPermissions"] == [
        {"type": "removeRules", "destination": "session",
         "rules": [{"toolName": "Bash", "ruleContent": "rm -r build"}], "behavior": "allow"}]
    assert "updatedPermissions" not in after_delivery


@pytest.mark.asyncio
async def test_a_session_deny_rule_answers_without_asking(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.db.add_rules([SessionRule(session_id=request.session_id, behavior=RuleBehavior.DENY,
                                     rule=RuleValue.parse("Bash"))])
        gw.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        await asyncio.wait_for(call, WAIT)
        result = result_of(await asyncio.wait_for(session.call_tool("approve", BASH), WAIT))
    assert result["behavior"] == "deny" and "Bash" in result["message"]
    assert gw.added.empty()


@pytest.mark.parametrize("arguments", [
    {"input": {"command": "ls"}},
    {"tool_name": "", "input": {}},
    {"tool_name": "Bash", "input": "ls"},
    {"tool_name": "Bash"},
    {"tool_name": 3, "input": {}},
    {"tool_name": "Bash", "input": {}, "tool_use_id": 7},
])
@pytest.mark.asyncio
async def test_malformed_arguments_are_denied_and_never_asked(gw: Fixture,
                                                              arguments: Any) -> None:
    async with mcp_client(gw.gateway.url) as session:
        result = result_of(await asyncio.wait_for(session.call_tool("approve", arguments), WAIT))
    assert result["behavior"] == "deny"
    assert "malformed" in result["message"]
    assert gw.added.empty()


@pytest.mark.asyncio
async def test_an_unknown_tool_name_is_denied(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        result = result_of(await asyncio.wait_for(session.call_tool("allow_everything", BASH),
                                                WAIT))
    assert result["behavior"] == "deny"


@pytest.mark.asyncio
async def test_an_exception_is_a_deny_never_an_allow(gw: Fixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the hub fell over")

    monkeypatch.setattr(gw.hub, "external_session", broken)
    async with mcp_client(gw.gateway.url) as session:
        result = result_of(await asyncio.wait_for(session.call_tool("approve", BASH), WAIT))
    assert result == {"behavior": "deny",
                      "message": "Qoder Desktop failed while asking: the hub fell over"}


@pytest.mark.asyncio
async def test_a_failing_broker_is_a_deny(gw: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(request: ApprovalRequest, deliverable: object = None) -> Decision:
        raise ValueError("no database")

    monkeypatch.setattr(gw.broker, "request", broken)
    async with mcp_client(gw.gateway.url) as session:
        result = result_of(await asyncio.wait_for(session.call_tool("approve", BASH), WAIT))
    assert result["behavior"] == "deny" and "no database" in result["message"]


def test_permission_result_of_every_decision_kind() -> None:
    assert permission_result(Decision.allow_once({"a": 1})) == {"behavior": "allow",
                                                              "updatedInput": {"a": 1}}
    assert permission_result(Decision.error("boom")) == {"behavior": "deny", "message": "boom"}
    assert permission_result(Decision.withdrawn())["behavior"] == "deny"
    with pytest.raises(ValueError):
        parse_arguments(["Bash", {}])
    assert parse_arguments({"tool_name": "Read", "input": {}, "extra": 1}) == ("Read", {}, None)
    assert client_label("claude-code", "2.1.0") == "claude-code 2.1.0"
    assert client_label("evil\x1b[2J\nname", None) == "evil[2Jname"
    assert client_label(None) == client_label("  ") == "unknown MCP client"


# -- who asks ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_each_agent_run_gets_its_own_external_session(gw: Fixture) -> None:
    """Grants stay with one run: two runs of the same client never share a session."""
    seen: list[ApprovalRequest] = []
    for name in ("claude-code", "claude-code", "qodercli"):
        async with mcp_client(gw.gateway.url, name=name, version="2.0") as session:
            for _ in range(2):
                call = await ask(session)
                request = await gw.next_request()
                seen.append(request)
                gw.broker.answer(request.request_id, Decision.deny("no"))
                await asyncio.wait_for(call, WAIT)
    assert seen[0].session_id == seen[1].session_id
    assert len({seen[0].session_id, seen[2].session_id, seen[4].session_id}) == 3
    seen = seen[::2]
    sessions = {s.session_id: s for s in gw.hub.sessions()}
    assert sessions[seen[0].session_id].name == "claude-code 2.0"
    assert sessions[seen[2].session_id].name == "qodercli 2.0"
    assert all(sessions[r.session_id].backend is Backend.EXTERNAL for r in seen)


@pytest.mark.asyncio
async def test_the_clients_root_becomes_the_requests_cwd(gw: Fixture, tmp_path: Path) -> None:
    async with mcp_client(gw.gateway.url, roots=[str(tmp_path)]) as session:
        call = await ask(session)
        request = await gw.next_request()
        gw.broker.answer(request.request_id, Decision.deny("no"))
        await asyncio.wait_for(call, WAIT)
    assert request.cwd == str(tmp_path)


# -- withdrawal and long waits ----------------------------------------------------------


@pytest.mark.parametrize("terminate_on_close", [True, False], ids=["session-ended", "hung-up"])
@pytest.mark.asyncio
async def test_an_agent_that_gives_up_withdraws_its_request(gw: Fixture,
                                                            terminate_on_close: bool) -> None:
    async with mcp_client(gw.gateway.url, terminate_on_close=terminate_on_close) as session:
        call = await ask(session)
        request = await gw.next_request()
        assert gw.broker.is_pending(request.request_id)
        call.cancel()  # the agent stops waiting and closes its connection
        with pytest.raises(asyncio.CancelledError):
            await call
    event, finished, decision = await gw.next_finished()
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert decision is not None and decision.kind is DecisionKind.WITHDRAWN
    assert not gw.broker.is_pending(request.request_id)
    [entry] = gw.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.WITHDRAWN


@pytest.mark.asyncio
async def test_an_mcp_cancellation_withdraws_the_request(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session)
        request = await gw.next_request()
        # JSON-RPC ids of this client: initialize is 0, the pending tools/call is 1.
        await session.send_notification(types.ClientNotification(types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=1, reason="user aborted"))))
        event, finished, _ = await gw.next_finished()
        assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
        with pytest.raises(Exception, match="cancel"):
            await asyncio.wait_for(call, WAIT)
    [entry] = gw.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.WITHDRAWN


@pytest.mark.asyncio
async def test_a_long_wait_is_kept_alive_and_never_timed_out(gw: Fixture) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    # The client's HTTP read timeout is 2 s; the person takes longer than that.
    async with mcp_client(gw.gateway.url) as session:
        call = await ask(session, progress_callback=on_progress)
        request = await gw.next_request()
        # 15 keep-alives, 0.2 s apart: the call has outlived the read timeout by then.
        await settle(lambda: len(progress) >= 15, timeout=30)
        assert not call.done() and gw.broker.is_pending(request.request_id)
        gw.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        result = result_of(await asyncio.wait_for(call, WAIT))
    assert result["behavior"] == "allow"
    assert len(progress) >= 5 and progress == sorted(progress)


@pytest.mark.asyncio
async def test_an_idle_session_is_closed_but_a_pending_call_keeps_it_open(db: Database) -> None:
    """The idle timer (an infinite sleep on the app's loop) works: a call in flight
    outlives the idle timeout; once nothing is in flight, the session is closed."""
    ledger, broker, hub = app_side(db)
    gateway = ApprovalGateway(broker, hub, TOKEN, port=0, keepalive_seconds=0,
                              session_idle_timeout=0.3)
    fixture = Fixture(gateway, broker, hub, db, ledger)
    route_broker_events(broker, fixture.added, fixture.finished)
    async with gateway, mcp_client(gateway.url) as session:
        call = await ask(session)
        request = await fixture.next_request()
        await asyncio.sleep(1.0)  # more than three idle timeouts while the person decides
        broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        assert result_of(await asyncio.wait_for(call, WAIT))["behavior"] == "allow"
        await asyncio.sleep(1.5)  # nothing in flight: more than the idle timeout
        with pytest.raises(McpError, match=r"[Ss]ession"):
            await session.list_tools()


@pytest.mark.asyncio
async def test_stopping_the_gateway_withdraws_pending_requests(gw: Fixture) -> None:
    async with mcp_client(gw.gateway.url, terminate_on_close=False) as session:
        call = await ask(session)
        request = await gw.next_request()
        await gw.gateway.stop()
        event, finished, _ = await gw.next_finished()
        assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
        call.cancel()
        with pytest.raises((asyncio.CancelledError, Exception)):
            await call
