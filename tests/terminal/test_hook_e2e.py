"""The real Claude Code CLI, started with no permission flags, asks Qoder Desktop through
the installed PermissionRequest hook (``claude -p``; the interactive CLI is in
test_hook_pty.py; so are questions: -p mode turns AskUserQuestion off). What every way in
shares (allow, edit, deny) is tests/e2e/test_ways_in.py; here is what only the hook does."""

from __future__ import annotations

import pytest
from helpers.terminal_rig import BUNDLED_CLI, TerminalRig

from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.models import (
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]

BASH_INPUT = {"command": "echo hello > hello.txt", "description": "Write hello into hello.txt"}


@pytest.mark.asyncio
async def test_a_session_grant_is_held_by_the_cli(rig: TerminalRig) -> None:
    process = await rig.start_cli("repeat_command")
    try:
        request = await rig.next_request()
        grant = PermissionSuggestion(
            type="addRules", rules=(RuleValue(tool_name="Bash", rule_content="touch marker.txt"),),
            behavior=RuleBehavior.ALLOW, destination="session")
        rig.broker.answer(request.request_id,
                          Decision.allow_session(dict(request.tool_input), (grant,)))
    finally:
        code, result, err = await rig.finish(process)
    assert code == 0, err
    assert result["result"] == "marker.txt is in place."
    assert [r.is_error for r in rig.results()] == [False, False]  # both calls ran
    assert rig.added.empty()  # the second, identical call never reached the hook
    [entry] = rig.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.ALLOW_SESSION


@pytest.mark.asyncio
async def test_without_the_app_the_cli_keeps_its_own_prompt(rig: TerminalRig) -> None:
    await rig.server.stop()  # Qoder Desktop is not running
    code, result, err = await rig.finish(await rig.start_cli())
    assert code == 0, err
    # -p mode has no terminal prompt: the CLI's own answer there is "denied".
    assert result["permission_denials"][0]["tool_name"] == "Bash"
    assert not (rig.workspace / "hello.txt").exists()
    assert rig.added.empty()


@pytest.mark.parametrize("wait_seconds", [1.0])
@pytest.mark.asyncio
async def test_nobody_answers_so_the_terminal_asks_and_nothing_is_allowed(
        rig: TerminalRig) -> None:
    process = await rig.start_cli()
    try:
        request = await rig.next_request()
        event, finished, decision = await rig.next_finished()
    finally:
        code, result, err = await rig.finish(process)
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert decision is not None and "Nobody answered" in decision.message
    assert code == 0, err
    assert result["permission_denials"][0]["tool_name"] == "Bash"
    assert not (rig.workspace / "hello.txt").exists()
    [entry] = rig.ledger.entries(request.session_id, include_tool_events=False)
    assert entry.outcome is DecisionKind.WITHDRAWN


def _marker_grant() -> PermissionSuggestion:
    return PermissionSuggestion(
        type="addRules", rules=(RuleValue(tool_name="Bash", rule_content="touch marker.txt"),),
        behavior=RuleBehavior.ALLOW, destination="session")


@pytest.mark.asyncio
async def test_a_revoked_grant_reaches_the_cli_with_the_next_allow(rig: TerminalRig) -> None:
    """Grant "touch marker.txt", revoke it while the next call waits, allow that call:
    the CLI drops the rule, so the next "touch marker.txt" asks again."""
    process = await rig.start_cli("revoke_command")
    try:
        first = await rig.next_request()
        rig.broker.answer(first.request_id,
                          Decision.allow_session(dict(first.tool_input), (_marker_grant(),)))
        second = await rig.next_request()
        assert second.tool_input["command"] == "touch other.txt"
        [rule] = rig.hub.rules(second.session_id)
        rig.hub.revoke_rule(rule.rule_id)
        assert [r.removal_pending for r in rig.hub.rules(second.session_id)] == [True]
        rig.broker.answer(second.request_id, Decision.allow_once(dict(second.tool_input)))
        third = await rig.next_request()  # the CLI no longer holds the grant: it asks
        assert third.tool_input["command"] == "touch marker.txt"
        [rule] = rig.hub.rules(third.session_id)
        assert not rule.removal_pending and rule.removal_delivered_at is not None
        rig.broker.answer(third.request_id, Decision.deny("That rule was revoked."))
    finally:
        code, result, err = await rig.finish(process)
    assert code == 0, err
    assert [d["tool_input"]["command"] for d in result["permission_denials"]] == [
        "touch marker.txt"]


@pytest.mark.asyncio
async def test_a_deny_does_not_carry_a_revocation(rig: TerminalRig) -> None:
    """Claude Code ignores rule updates in a denied hook answer: the revocation stays
    on its way, and meanwhile the CLI still runs the revoked command by itself."""
    process = await rig.start_cli("revoke_command")
    try:
        first = await rig.next_request()
        rig.broker.answer(first.request_id,
                          Decision.allow_session(dict(first.tool_input), (_marker_grant(),)))
        second = await rig.next_request()
        [rule] = rig.hub.rules(second.session_id)
        rig.hub.revoke_rule(rule.rule_id)
        rig.broker.answer(second.request_id, Decision.deny("Not that one."))
    finally:
        code, _result, err = await rig.finish(process)
    assert code == 0, err
    assert rig.added.empty()  # the third call never asked: the CLI still held the grant
    assert [r.is_error for r in rig.results()] == [False, True, False]
    [rule] = rig.hub.rules(second.session_id)
    assert rule.removal_pending
