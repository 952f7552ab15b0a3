"""The approval broker: one queue, exactly-once answers, rules first, fail closed."""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path

import pytest
from helpers.broker_events import SESSION, Recorder, bash_request, watch_decision_writes

from qoder_desktop.approval.broker import AlreadyAnswered, ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionRule,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

pytestmark = pytest.mark.asyncio



def _rule(behavior: RuleBehavior, text: str) -> SessionRule:
    return SessionRule(session_id=SESSION, behavior=behavior, rule=RuleValue.parse(text))


async def test_a_person_answers_and_the_decision_is_on_disk(
        broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    task = asyncio.create_task(broker.request(bash_request("make build")))
    request = await recorder.next_added()
    assert broker.pending() == [request]
    broker.answer(request.request_id, Decision.allow_once({"command": "make build"}))
    decision = await task
    assert decision.kind is DecisionKind.ALLOW_ONCE
    [entry] = ledger.entries(SESSION)
    assert entry.outcome is DecisionKind.ALLOW_ONCE and entry.decided_by is DecidedBy.USER
    assert entry.final_input == {"command": "make build"}
    assert [e for e, _, _ in recorder.events] == [BrokerEvent.ADDED, BrokerEvent.ANSWERED]
    assert broker.pending() == []


async def test_the_queue_stays_oldest_first_as_requests_come_out_of_order_and_go(
        broker: ApprovalBroker) -> None:
    # Received times out of arrival order, some equal (then the one queued first leads);
    # after every answer the queue is what sorting the waiting requests gives.
    from datetime import UTC, datetime, timedelta

    recorder = Recorder(broker)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    offsets = [5, 1, 9, 1, 3, 9, 0, 7, 2, 2]
    tasks = [asyncio.create_task(broker.request(
        bash_request(f"job {i}", received_at=start + timedelta(seconds=offset))))
        for i, offset in enumerate(offsets)]
    requests = [await recorder.next_added() for _ in offsets]
    arrival = {r.request_id: n for n, r in enumerate(requests)}

    def expected(waiting: list[ApprovalRequest]) -> list[str]:
        return [r.request_id for r in sorted(
            waiting, key=lambda r: (r.received_at, arrival[r.request_id]))]

    waiting = list(requests)
    assert [r.request_id for r in broker.pending()] == expected(waiting)
    order = list(requests)
    random.Random(3).shuffle(order)
    for request in order:
        broker.answer(request.request_id, Decision.deny("no"))
        waiting.remove(request)
        assert [r.request_id for r in broker.pending()] == expected(waiting)  # at once
        await asyncio.sleep(0)
        assert [r.request_id for r in broker.pending()] == expected(waiting)
    await asyncio.gather(*tasks)
    late = asyncio.create_task(broker.request(bash_request("late", received_at=start)))
    assert [r.tool_input["command"] for r in [await recorder.next_added()]] == ["late"]
    assert [r.tool_input["command"] for r in broker.pending()] == ["late"]
    broker.answer(broker.pending()[0].request_id, Decision.deny("no"))
    await late
    assert broker.pending() == []


async def test_twenty_concurrent_requests_answered_in_random_order_each_get_their_own(
        broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    tasks = [asyncio.create_task(broker.request(bash_request(f"job {i}"))) for i in range(20)]
    requests = [await recorder.next_added() for _ in range(20)]
    assert [r.tool_input["command"] for r in broker.pending()] == [f"job {i}" for i in range(20)]
    order = list(requests)
    random.Random(7).shuffle(order)
    for request in order:
        broker.answer(request.request_id, Decision.deny(f"no to {request.tool_input['command']}"))
        with pytest.raises(AlreadyAnswered):
            broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    decisions = await asyncio.gather(*tasks)
    for i, decision in enumerate(decisions):
        assert decision.kind is DecisionKind.DENY
        assert decision.message == f"no to job {i}"
    answered = [rid for event, rid, _ in recorder.events if event is BrokerEvent.ANSWERED]
    assert sorted(answered) == sorted(r.request_id for r in requests)
    assert len(answered) == 20
    assert all(e.outcome is DecisionKind.DENY for e in ledger.entries(SESSION))


async def test_cancelled_request_is_recorded_as_withdrawn_not_denied(
        broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    task = asyncio.create_task(broker.request(bash_request("rm -rf build")))
    request = await recorder.next_added()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert recorder.events[-1][0] is BrokerEvent.WITHDRAWN
    assert not broker.is_pending(request.request_id)
    [entry] = ledger.entries(SESSION)
    assert entry.outcome is DecisionKind.WITHDRAWN
    assert entry.decided_by is DecidedBy.WITHDRAWN
    with pytest.raises(AlreadyAnswered):
        broker.answer(request.request_id, Decision.allow_once({"command": "rm -rf build"}))


async def test_exception_inside_a_subscriber_yields_a_deny(
        broker: ApprovalBroker, ledger: Ledger) -> None:
    def broken(event: BrokerEvent, request: ApprovalRequest, decision: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            raise RuntimeError("the dialog could not be built")

    broker.subscribe(broken)
    decision = await asyncio.wait_for(broker.request(bash_request("make")), 5)
    assert decision.kind is DecisionKind.ERROR
    assert not decision.kind.allows
    assert "the dialog could not be built" in decision.message
    assert ledger.entries(SESSION)[0].outcome is DecisionKind.ERROR


async def test_a_call_the_agent_asks_about_despite_a_granted_rule_goes_to_a_person(
        broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    """The CLI holds the grant: a matching call reaching us was escalated on purpose."""
    recorder = Recorder(broker)
    db.add_rules([_rule(RuleBehavior.ALLOW, "Bash(make *)")])
    task = asyncio.create_task(broker.request(bash_request("make test")))
    request = await recorder.next_added()
    assert request.covered_by_rule == "Bash(make *)"
    broker.answer(request.request_id, Decision.deny("not this time"))
    decision = await task
    assert decision.kind is DecisionKind.DENY and decision.decided_by is DecidedBy.USER
    [entry] = ledger.entries(SESSION)
    assert entry.outcome is DecisionKind.DENY
    assert entry.matched_rule == "Bash(make *)"  # the rule that covers it, in the ledger


async def test_only_updates_the_agent_receives_are_granted_and_recorded(
        broker: ApprovalBroker, db: Database) -> None:
    recorder = Recorder(broker)

    def sdk_check(update: PermissionSuggestion) -> str | None:
        return "refused by the SDK" if update.rules and update.rules[0].tool_name == "Edit" \
            else None

    task = asyncio.create_task(broker.request(bash_request("npm test"), sdk_check))
    request = await recorder.next_added()
    good = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(npm test)"),),
                                behavior=RuleBehavior.ALLOW, destination="session")
    refused_by_sdk = good.model_copy(update={"rules": (RuleValue.parse("Edit(./**)"),)})
    no_behavior = good.model_copy(update={"behavior": None})
    star = good.model_copy(update={"rules": (RuleValue.parse("Bash(*)"),)})
    bypass = PermissionSuggestion(type="setMode", mode="bypassPermissions",
                                  destination="session")
    approval = broker.approval(request.request_id)
    assert approval is not None
    broker.answer(request.request_id, Decision.allow_session(
        {"command": "npm test"}, (good, refused_by_sdk, no_behavior, star, bypass)))
    decision = await task
    assert decision.updates == (good,)
    assert approval.updates == (good,)  # what the agent receives, not all the person ticked
    assert approval.decision is not None and len(approval.decision.updates) == 5
    assert [str(r.rule) for r in db.active_rules(SESSION)] == ["Bash(npm test)"]


async def test_deny_rule_beats_allow_rule(broker: ApprovalBroker, db: Database) -> None:
    db.add_rules([_rule(RuleBehavior.ALLOW, "Bash(make *)"),
                  _rule(RuleBehavior.DENY, "Bash(make clean)")])
    decision = await broker.request(bash_request("make clean"))
    assert decision.kind is DecisionKind.DENY
    assert decision.decided_by is DecidedBy.SESSION_RULE


async def test_prefix_rule_never_allows_a_chained_command(
        broker: ApprovalBroker, db: Database) -> None:
    recorder = Recorder(broker)
    db.add_rules([_rule(RuleBehavior.ALLOW, "Bash(git diff *)")])
    task = asyncio.create_task(broker.request(bash_request("git diff; rm -rf ~")))
    request = await recorder.next_added()
    assert request.tool_input["command"] == "git diff; rm -rf ~"
    broker.answer(request.request_id, Decision.deny("no"))
    assert (await task).kind is DecisionKind.DENY


async def test_questions_are_never_answered_by_a_rule(broker: ApprovalBroker,
                                                      db: Database) -> None:
    recorder = Recorder(broker)
    db.add_rules([_rule(RuleBehavior.ALLOW, "AskUserQuestion")])
    question = ApprovalRequest(session_id=SESSION, backend=Backend.CLAUDE,
                               tool_name="AskUserQuestion", tool_input={"questions": []})
    task = asyncio.create_task(broker.request(question))
    request = await recorder.next_added()
    broker.answer(request.request_id, Decision.deny("cancelled"))
    assert (await task).kind is DecisionKind.DENY


async def test_allow_for_session_stores_the_granted_rules(
        broker: ApprovalBroker, db: Database) -> None:
    recorder = Recorder(broker)
    task = asyncio.create_task(broker.request(bash_request("npm test")))
    request = await recorder.next_added()
    grant = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(npm test)"),),
                                 behavior=RuleBehavior.ALLOW, destination="session")
    broker.answer(request.request_id, Decision.allow_session({"command": "npm test"}, (grant,)))
    assert (await task).kind is DecisionKind.ALLOW_SESSION
    assert [str(r.rule) for r in db.active_rules(SESSION)] == ["Bash(npm test)"]


async def test_duplicate_request_id_is_refused_and_the_first_still_waits(
        broker: ApprovalBroker) -> None:
    recorder = Recorder(broker)
    first = bash_request("make")
    task = asyncio.create_task(broker.request(first))
    await recorder.next_added()
    duplicate = await broker.request(first.model_copy(update={"tool_input": {"command": "rm"}}))
    assert duplicate.kind is DecisionKind.ERROR
    assert broker.is_pending(first.request_id)
    broker.answer(first.request_id, Decision.allow_once({"command": "make"}))
    assert (await task).final_input == {"command": "make"}


async def test_withdrawing_a_session_answers_each_of_its_requests_once(
        broker: ApprovalBroker) -> None:
    recorder = Recorder(broker)
    tasks = [asyncio.create_task(broker.request(bash_request(f"c{i}"))) for i in range(3)]
    for _ in tasks:
        await recorder.next_added()
    assert broker.withdraw_session(SESSION) == 3
    assert broker.withdraw_session(SESSION) == 0
    assert all(d.kind is DecisionKind.WITHDRAWN for d in await asyncio.gather(*tasks))
    assert [e for e, _, _ in recorder.events].count(BrokerEvent.WITHDRAWN) == 3


async def test_a_failed_ledger_write_turns_an_allow_into_a_deny(
        broker: ApprovalBroker, db: Database) -> None:
    recorder = Recorder(broker)
    task = asyncio.create_task(broker.request(bash_request("make")))
    request = await recorder.next_added()
    db.close()
    broker.answer(request.request_id, Decision.allow_once({"command": "make"}))
    decision = await task
    assert decision.kind is DecisionKind.ERROR
    assert "could not record" in decision.message


async def test_a_person_cannot_answer_with_withdrawn(broker: ApprovalBroker) -> None:
    recorder = Recorder(broker)
    task = asyncio.create_task(broker.request(bash_request("make")))
    request = await recorder.next_added()
    with pytest.raises(ValueError):
        broker.answer(request.request_id, Decision.withdrawn())
    broker.answer(request.request_id, Decision.deny("no"))
    await task


async def test_the_person_is_asked_while_the_request_is_written_and_the_answer_waits_for_it(
        broker: ApprovalBroker, db: Database, ledger: Ledger,
        monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(broker)
    disk = threading.Event()
    writing = watch_decision_writes(ledger, monkeypatch)
    db.writer.submit(disk.wait)  # the writer thread is busy (a slow disk)
    try:
        task = asyncio.create_task(broker.request(bash_request("make")))
        request = await recorder.next_added()  # the dialog does not wait for the disk
        broker.answer(request.request_id, Decision.allow_once({"command": "make"}))
        await asyncio.wait_for(writing.wait(), 5)  # the broker is writing the decision
        assert not task.done()  # but the answer waits until both rows are committed
        assert not any(event is BrokerEvent.ANSWERED for event, _, _ in recorder.events)
    finally:
        disk.set()
    assert (await task).kind is DecisionKind.ALLOW_ONCE
    [entry] = ledger.entries(SESSION)
    assert entry.outcome == DecisionKind.ALLOW_ONCE


async def test_a_request_that_cannot_be_recorded_is_denied_without_waiting_for_a_person(
        broker: ApprovalBroker, db: Database) -> None:
    recorder = Recorder(broker)
    db.writer.close()  # every write now fails; reads still work
    decision = await asyncio.wait_for(broker.request(bash_request("make")), 5)
    assert decision.kind is DecisionKind.ERROR
    assert "could not record" in decision.message
    assert [event for event, _, _ in recorder.events] == [BrokerEvent.ADDED,
                                                          BrokerEvent.UNRECORDED,
                                                          BrokerEvent.ANSWERED]
    assert not broker.pending()
    assert [kept.sent for kept in broker.unwritten()] == [decision]  # kept in memory



async def test_a_write_to_a_sensitive_file_the_person_granted_names_their_rule_when_asked_again(
        broker: ApprovalBroker, db: Database, tmp_path: Path) -> None:
    """The CLI asks about its own settings file under any rule (so does our matcher); the
    dialog must still say which of the person's rules covers the call, not offer it as
    if nothing had been granted."""
    from qoder_desktop.rules.matcher import rule_for_request

    workspace = tmp_path / "ws"
    (workspace / ".claude").mkdir(parents=True)
    write = {"file_path": str(workspace / ".claude" / "settings.local.json"), "content": "{}"}
    rule = rule_for_request("Write", write, str(workspace))  # what the dialog offered
    assert rule is not None
    db.add_rules([_rule(RuleBehavior.ALLOW, str(rule))])
    recorder = Recorder(broker)
    task = asyncio.create_task(broker.request(ApprovalRequest(
        session_id=SESSION, backend=Backend.CLAUDE, tool_name="Write", tool_input=write,
        cwd=str(workspace))))
    request = await recorder.next_added()
    assert (request.covered_by_rule, request.granted_while_waiting) == (str(rule), False)
    broker.answer(request.request_id, Decision.deny("no"))
    assert (await task).decided_by is DecidedBy.USER


async def test_a_grant_leaves_a_pending_sibling_the_cli_would_still_ask_about(
        broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    """A rule holding `..` covers the sibling for our matcher, but the CLI never matches
    such a rule: the sibling stays with a person."""
    recorder = Recorder(broker)

    def write(path: str) -> ApprovalRequest:
        return ApprovalRequest(session_id=SESSION, session_name="demo", backend=Backend.CLAUDE,
                               tool_name="Write", cwd="/tmp/ws",
                               tool_input={"file_path": path, "content": "x"})

    edit = write("/tmp/ws/src/new.txt")
    first = asyncio.create_task(broker.request(edit))
    granted_request = await recorder.next_added()
    sibling = asyncio.create_task(broker.request(write("/tmp/ws/src/other.txt")))
    await recorder.next_added()
    grant = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Edit(./src/../**)"),),
                                 behavior=RuleBehavior.ALLOW, destination="session")
    broker.answer(granted_request.request_id, Decision.allow_session(dict(edit.tool_input),
                                                                     (grant,)))
    assert (await first).kind is DecisionKind.ALLOW_SESSION
    [left] = broker.pending()
    assert left.tool_input["file_path"] == "/tmp/ws/src/other.txt"
    broker.withdraw_session(SESSION)
    await sibling

