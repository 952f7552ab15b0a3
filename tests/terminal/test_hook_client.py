"""The hook command as the CLI runs it (a real process): it never costs the terminal its
own prompt, and a terminal that stops waiting withdraws the desktop request."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
from typing import Any

import pytest
from helpers.hook_command import start_hook
from helpers.terminal_rig import TerminalRig

from qoder_desktop.agents.hub import HubEventKind
from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.models import (
    Decision,
    DecisionKind,
    RuleBehavior,
    RuleValue,
    SessionRule,
)
from qoder_desktop.store.database import Database
from qoder_desktop.terminal import protocol
from qoder_desktop.terminal.hook_lines import LEFT_IN_TERMINAL, hook_output

EVENT: dict[str, Any] = {
    "hook_event_name": "PermissionRequest", "session_id": "s-1", "cwd": "/work/project",
    "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": "rm -r build"},
    "transcript_path": "/nonexistent/s-1.jsonl",
    "permission_suggestions": [{"type": "addRules", "rules": [
        {"toolName": "Bash", "ruleContent": "rm -r build"}], "behavior": "allow",
        "destination": "localSettings"}]}



async def _finish(process: asyncio.subprocess.Process, *,
                  says: str = "") -> tuple[int, str]:
    """(exit code, stdout); stderr must be empty, or hold `says`."""
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    assert says in err.decode() if says else err == b"", err
    return process.returncode, out.decode()


@pytest.mark.asyncio
async def test_the_answer_is_printed_for_the_cli(rig: TerminalRig) -> None:
    process = await start_hook(json.dumps(EVENT).encode())
    request = await rig.next_request()
    assert request.suggestions[0].rules is not None  # the CLI's suggestions are shown
    rig.broker.answer(request.request_id, Decision.allow_once({"command": "rm -r build/tmp"}))
    code, out = await _finish(process)
    assert code == 0
    decision = {"behavior": "allow", "updatedInput": {"command": "rm -r build/tmp"}}
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                      "decision": decision}}


@pytest.mark.asyncio
async def test_without_the_app_the_hook_prints_nothing(rig: TerminalRig) -> None:
    await rig.server.stop()
    code, out = await _finish(await start_hook(json.dumps(EVENT).encode()))
    assert (code, out) == (0, "")


@pytest.mark.parametrize("stdin", [b"", b"{not json", b"[1]", json.dumps(
    {**EVENT, "tool_input": "rm"}).encode(), json.dumps({**EVENT, "session_id": ""}).encode()])
@pytest.mark.asyncio
async def test_malformed_input_prints_nothing_and_asks_nobody(rig: TerminalRig,
                                                             stdin: bytes) -> None:
    code, out = await _finish(await start_hook(stdin))
    assert (code, out) == (0, "")
    assert rig.added.empty()


@pytest.mark.asyncio
async def test_a_wrong_token_is_refused(rig: TerminalRig) -> None:
    protocol.token_path().write_text("not-the-token\n")
    code, out = await _finish(await start_hook(json.dumps(EVENT).encode()),
                              says="could not prove it is Qoder Desktop")
    assert (code, out) == (0, "")
    assert rig.server.refused == 1 and rig.added.empty()


@pytest.mark.asyncio
async def test_sigterm_withdraws_the_desktop_request(rig: TerminalRig) -> None:
    process = await start_hook(json.dumps(EVENT).encode())
    request = await rig.next_request()
    process.send_signal(signal.SIGTERM)  # the person answered No in the terminal
    event, finished, decision = await rig.next_finished()
    code, out = await _finish(process)
    assert (code, out) == (0, "")
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert decision is not None and decision.message == LEFT_IN_TERMINAL
    [entry] = rig.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.WITHDRAWN


@pytest.mark.asyncio
async def test_a_killed_hook_withdraws_the_desktop_request(rig: TerminalRig) -> None:
    process = await start_hook(json.dumps(EVENT).encode())
    request = await rig.next_request()
    process.kill()
    event, finished, _ = await rig.next_finished()
    await process.wait()
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)


@pytest.mark.asyncio
async def test_the_terminal_session_gets_no_auto_allow_from_our_store(rig: TerminalRig) -> None:
    grant_input = dict(EVENT["tool_input"])
    for _ in range(2):
        process = await start_hook(json.dumps(EVENT).encode())
        request = await rig.next_request()  # the second call asks a person again
        rig.broker.answer(request.request_id, Decision.allow_session(grant_input, (
            request.suggestions[0],)))
        _code, out = await _finish(process)
        decision = json.loads(out)["hookSpecificOutput"]["decision"]
        assert decision["updatedPermissions"] == [{
            "type": "addRules", "destination": "session", "behavior": "allow",
            "rules": [{"toolName": "Bash", "ruleContent": "rm -r build"}]}]


def test_the_socket_and_token_are_the_users_only(rig: TerminalRig) -> None:
    folder = protocol.runtime_dir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(protocol.token_path().stat().st_mode) == 0o600
    assert stat.S_IMODE(os.stat(protocol.socket_path()).st_mode) == 0o600
    assert stat.S_ISSOCK(os.stat(protocol.socket_path()).st_mode)


def test_a_deny_and_stop_reaches_the_cli_as_an_interrupt() -> None:
    output = hook_output(Decision.deny("Stop right there.", interrupt=True))
    assert output["hookSpecificOutput"]["decision"] == {
        "behavior": "deny", "message": "Stop right there.", "interrupt": True}




@pytest.mark.asyncio
async def test_a_revocation_travels_with_the_next_allow_only_and_is_then_delivered(
        rig: TerminalRig, db: Database) -> None:
    info = rig.hub.terminal_session(EVENT["session_id"], "Claude Code", EVENT["cwd"])
    granted = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                          rule=RuleValue.parse("Bash(rm -r build)"))
    db.add_rules([granted])
    rig.hub.revoke_rule(granted.rule_id)
    delivered = asyncio.Event()
    rig.hub.subscribe(lambda event: delivered.set() if event.kind is HubEventKind.RULES
                      and not event.rules[0].removal_pending else None)

    async def answered(decision: Decision) -> dict[str, Any]:
        process = await start_hook(json.dumps(EVENT).encode())
        request = await rig.next_request()
        rig.broker.answer(request.request_id, decision)
        _code, out = await _finish(process)
        return dict(json.loads(out)["hookSpecificOutput"]["decision"])

    denied = await answered(Decision.deny("Not now."))
    assert "updatedPermissions" not in denied  # the CLI ignores updates in a deny
    assert [r.removal_pending for r in rig.hub.rules(info.session_id)] == [True]
    allowed = await answered(Decision.allow_once(dict(EVENT["tool_input"])))
    assert allowed["updatedPermissions"] == [{
        "type": "removeRules", "destination": "session", "behavior": "allow",
        "rules": [{"toolName": "Bash", "ruleContent": "rm -r build"}]}]
    await asyncio.wait_for(delivered.wait(), 30)  # the hook confirmed it printed it
    [rule] = rig.hub.rules(info.session_id)
    assert rule.removal_delivered_at is not None
    again = await answered(Decision.allow_once(dict(EVENT["tool_input"])))
    assert "updatedPermissions" not in again  # told once


async def _unconfirmed_allow(rig: TerminalRig) -> dict[str, Any]:
    """One request through the real protocol by a hook that reads the allow but dies
    before it can print it (it never confirms); the decision it was sent."""
    token = protocol.token_path().read_text().strip()
    reader, writer = await asyncio.open_unix_connection(str(protocol.socket_path()),
                                                        limit=protocol.MAX_LINE)
    hook_nonce = protocol.new_nonce()
    writer.write(protocol.encode({"hello": protocol.HELLO, "version": protocol.VERSION,
                                  "nonce": hook_nonce}))
    challenge = protocol.decode(await reader.readline())
    sealer = protocol.Sealer(token, hook_nonce, challenge["nonce"], sending=protocol.TO_APP,
                             receiving=protocol.TO_HOOK)
    writer.write(sealer.seal({"proof": protocol.hook_proof(token, challenge["nonce"],
                                                           hook_nonce),
                              "agent": "claude", "event": EVENT}))
    assert sealer.open(await reader.readline())["type"] == protocol.WAITING
    request = await rig.next_request()
    rig.broker.answer(request.request_id, Decision.allow_once(dict(EVENT["tool_input"])))
    answer = sealer.open(await reader.readline())
    writer.close()
    return dict(answer["output"]["hookSpecificOutput"]["decision"])


@pytest.mark.asyncio
async def test_a_revocation_whose_answer_was_never_printed_goes_again(
        rig: TerminalRig, db: Database) -> None:
    info = rig.hub.terminal_session(EVENT["session_id"], "Claude Code", EVENT["cwd"])
    granted = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                          rule=RuleValue.parse("Bash(rm -r build)"))
    db.add_rules([granted])
    rig.hub.revoke_rule(granted.rule_id)
    lost = await _unconfirmed_allow(rig)
    assert lost["updatedPermissions"][0]["type"] == "removeRules"
    process = await start_hook(json.dumps(EVENT).encode())
    request = await rig.next_request()
    assert [r.removal_pending for r in rig.hub.rules(info.session_id)] == [True]
    rig.broker.answer(request.request_id, Decision.allow_once(dict(EVENT["tool_input"])))
    _code, out = await _finish(process)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision["updatedPermissions"] == lost["updatedPermissions"]  # sent again
