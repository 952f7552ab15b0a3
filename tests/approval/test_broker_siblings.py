"""A grant made while other requests of its session wait: never an allow for them.

Sub-agents run in parallel, so several permission requests of one session wait at once.
The CLI asked about each before it held the rule a person now grants, and our matcher is
not the CLI: the broker marks the waiting requests the new allow rules cover (UPDATED),
denies those its deny rules cover, and leaves every allow to the person.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.broker_events import SESSION, Recorder, bash_request

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

pytestmark = pytest.mark.asyncio



def _grant(*rules: tuple[RuleBehavior, str]) -> tuple[PermissionSuggestion, ...]:
    return tuple(PermissionSuggestion(type="addRules", rules=(RuleValue.parse(text),),
                                      behavior=behavior, destination="session")
                 for behavior, text in rules)


async def test_a_grant_never_answers_the_requests_already_waiting_it_marks_them(
        broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    """Siblings were asked before the CLI held the grant, and our matcher is not the
    CLI: they stay pending, marked, until the person answers each one."""
    recorder = Recorder(broker)
    first = asyncio.create_task(broker.request(bash_request("npm test")))
    granted_request = await recorder.next_added()
    sibling = asyncio.create_task(broker.request(bash_request("npm test")))
    waiting = await recorder.next_added()
    other_command = asyncio.create_task(broker.request(bash_request("npm publish")))
    await recorder.next_added()
    elsewhere = bash_request("npm test").model_copy(update={"session_id": "session-2"})
    other_session = asyncio.create_task(broker.request(elsewhere))
    await recorder.next_added()
    broker.answer(granted_request.request_id, Decision.allow_session(
        {"command": "npm test"}, _grant((RuleBehavior.ALLOW, "Bash(npm test)"))))
    assert (await first).kind is DecisionKind.ALLOW_SESSION
    marked = await recorder.next_updated()
    assert marked.request_id == waiting.request_id
    assert (marked.covered_by_rule, marked.granted_while_waiting) == ("Bash(npm test)", True)
    # Told before the grant's own answer, so the next dialog opens with the mark.
    kinds = [(event, rid) for event, rid, _ in recorder.events]
    assert kinds.index((BrokerEvent.UPDATED, waiting.request_id)) < kinds.index(
        (BrokerEvent.ANSWERED, granted_request.request_id))
    for _ in range(3):  # (loop turns in which an answer would have gone out)
        await asyncio.sleep(0)
    assert not sibling.done()
    assert [(r.tool_input["command"], r.session_id, r.covered_by_rule)
            for r in broker.pending()] == [("npm test", SESSION, "Bash(npm test)"),
                                           ("npm publish", SESSION, None),
                                           ("npm test", "session-2", None)]
    assert recorder.updated.empty()  # only the covered sibling of the grant's session
    broker.answer(waiting.request_id, Decision.allow_once({"command": "npm test"}))
    decision = await asyncio.wait_for(sibling, 5)
    assert (decision.kind, decision.decided_by) == (DecisionKind.ALLOW_ONCE, DecidedBy.USER)
    broker.withdraw_session(SESSION)
    broker.withdraw_session("session-2")
    await asyncio.gather(other_command, other_session)
    rows = {e.entry_id: e for e in ledger.entries(SESSION, include_tool_events=False)}
    row = rows[waiting.request_id]
    assert (row.outcome, row.decided_by, row.matched_rule) == (
        DecisionKind.ALLOW_ONCE, DecidedBy.USER, "Bash(npm test)")


async def test_a_deny_rule_granted_with_an_allow_rule_denies_the_waiting_sibling_it_covers(
        broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    first = asyncio.create_task(broker.request(bash_request("npm test")))
    granted_request = await recorder.next_added()
    publish = asyncio.create_task(broker.request(bash_request("npm publish")))
    await recorder.next_added()
    lint = asyncio.create_task(broker.request(bash_request("npm run lint")))
    covered = await recorder.next_added()
    broker.answer(granted_request.request_id, Decision.allow_session(
        {"command": "npm test"}, _grant((RuleBehavior.ALLOW, "Bash(npm *)"),
                                        (RuleBehavior.DENY, "Bash(npm publish)"))))
    await first
    denied = await asyncio.wait_for(publish, 5)
    assert (denied.kind, denied.decided_by, denied.rule) == (
        DecisionKind.DENY, DecidedBy.SESSION_RULE, "Bash(npm publish)")
    assert denied.message == "Denied by the session rule Bash(npm publish)."
    assert [(r.request_id, r.covered_by_rule) for r in broker.pending()] == [
        (covered.request_id, "Bash(npm *)")]
    assert not lint.done()
    broker.answer(covered.request_id, Decision.deny("not lint"))
    assert (await lint).decided_by is DecidedBy.USER


async def test_a_grant_does_not_let_a_waiting_command_through_a_symlink_out_of_the_workspace(
        broker: ApprovalBroker, db: Database, tmp_path: Path) -> None:
    """The reviewer's case: two sub-agents ask at once; the person allows `touch a` for
    the session; the other call, which writes outside the workspace through a symlink,
    still waits for the person (the CLI, holding the same rule, would have asked)."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "link_out").symlink_to(outside)
    recorder = Recorder(broker)

    def touch(command: str) -> ApprovalRequest:
        return bash_request(command, agent_id="sub-1").model_copy(update={"cwd": str(workspace)})

    first = asyncio.create_task(broker.request(touch("touch a")))
    granted_request = await recorder.next_added()
    escape = asyncio.create_task(broker.request(touch("touch a link_out/../escaped.txt")))
    waiting = await recorder.next_added()
    broker.answer(granted_request.request_id, Decision.allow_session(
        {"command": "touch a"}, _grant((RuleBehavior.ALLOW, "Bash(touch a *)"))))
    await first
    for _ in range(3):
        await asyncio.sleep(0)
    assert not escape.done()
    assert [r.request_id for r in broker.pending()] == [waiting.request_id]
    broker.answer(waiting.request_id, Decision.deny("not outside the workspace"))
    assert (await escape).kind is DecisionKind.DENY
