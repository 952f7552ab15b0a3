"""The one interface per way in (`approval.source`): a new way in is one small subclass,
and what every way in shares — the request, the suggestions' check, withdrawal, the
result with its revocations — behaves the same for it.

`PhoneSource` below is the whole of a way in (a phone app, say): the broker it asks,
where revoked rules wait, and how its answer is written.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

import pytest
from claude_agent_sdk import PermissionUpdate
from helpers.broker_events import SESSION, Recorder

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.approval.source import (
    ApprovalSource,
    Removals,
    SessionRef,
    ToolCall,
    permission_result,
    wire_problem,
)
from qoder_desktop.domain.models import (
    Backend,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionRule,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.store.removals import mark_delivered, removals_due

pytestmark = pytest.mark.asyncio

GOOD = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make"}],
        "behavior": "allow", "destination": "session"}
NO_BEHAVIOR = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make"}],
               "destination": "session"}


class StoreRemovals(Removals):
    """Revoked rules as the hub keeps them: in the database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def removals_due(self, session_id: str) -> list[SessionRule]:
        return removals_due(self.db, session_id)

    def removals_delivered(self, session_id: str, rule_ids: list[str]) -> None:
        mark_delivered(self.db, rule_ids)


class PhoneSource(ApprovalSource):
    """A new way in, complete: a phone that shows the prompt and sends back JSON."""

    def encode(self, decision: Decision, removals: Sequence[RuleValue]) -> dict[str, Any]:
        return permission_result(decision, removals)


PHONE = SessionRef(SESSION, "demo", Backend.EXTERNAL, cwd="/tmp/ws")


@pytest.fixture
def phone(broker: ApprovalBroker, db: Database) -> PhoneSource:
    return PhoneSource(broker, StoreRemovals(db))


def bash(command: str = "make", suggestions: Any = None) -> ToolCall:
    return ToolCall("Bash", {"command": command}, "toolu_1", suggestions=suggestions)


async def test_a_new_way_in_goes_through_the_broker_and_carries_revocations(
        phone: PhoneSource, broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    held = SessionRule(session_id=SESSION, behavior=RuleBehavior.ALLOW,
                       rule=RuleValue.parse("Bash(make:*)"))
    db.add_rules([held])
    db.revoke_rule(held.rule_id)
    recorder = Recorder(broker)
    request = phone.request_for(PHONE, bash(suggestions=[GOOD, NO_BEHAVIOR]))
    asking = asyncio.create_task(phone.ask(request))
    shown = await asyncio.wait_for(recorder.added.get(), 5)
    assert shown.request_id == request.request_id and shown.backend is Backend.EXTERNAL
    assert [s.to_wire() for s in shown.suggestions] == [GOOD]

    broker.answer(request.request_id, Decision.allow_once({"command": "make"}))
    answer = phone.answer_for(request, await asking)
    assert answer.result == {"behavior": "allow", "updatedInput": {"command": "make"},
                             "updatedPermissions": [{
                                 "type": "removeRules", "destination": "session",
                                 "behavior": "allow",
                                 "rules": [{"toolName": "Bash", "ruleContent": "make:*"}]}]}
    assert [rule.removal_pending for rule in db.all_rules(SESSION)] == [True]
    phone.delivered(answer)  # the phone says its agent got it
    assert [rule.removal_pending for rule in db.all_rules(SESSION)] == [False]
    [entry] = ledger.entries(SESSION, include_tool_events=False)
    assert entry.outcome is DecisionKind.ALLOW_ONCE


async def test_a_deny_carries_no_revocation(phone: PhoneSource, broker: ApprovalBroker,
                                            db: Database) -> None:
    held = SessionRule(session_id=SESSION, behavior=RuleBehavior.ALLOW,
                       rule=RuleValue.parse("Bash(make:*)"))
    db.add_rules([held])
    db.revoke_rule(held.rule_id)
    request = phone.request_for(PHONE, bash())
    asking = asyncio.create_task(phone.ask(request))
    await _until(lambda: broker.is_pending(request.request_id))
    broker.answer(request.request_id, Decision.deny("Not now."))
    answer = phone.answer_for(request, await asking)
    assert answer.result == {"behavior": "deny", "message": "Not now."}
    assert answer.removals == ()


# -- withdrawal: one path for every way in -------------------------------------------------


async def test_withdrawn_by_the_way_in_while_a_person_looks(
        phone: PhoneSource, broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    request = phone.request_for(PHONE, bash())
    asking = asyncio.create_task(phone.ask(request))
    await asyncio.wait_for(recorder.added.get(), 5)
    assert phone.open_requests() == [request]
    assert phone.withdraw_where("Answered on the phone's lock screen.") == 1
    assert not broker.is_pending(request.request_id)  # the broker heard at once
    decision = await asking
    assert (decision.kind, decision.message) == (DecisionKind.WITHDRAWN,
                                                 "Answered on the phone's lock screen.")
    assert phone.open_requests() == []
    [entry] = ledger.entries(SESSION, include_tool_events=False)
    assert entry.outcome is DecisionKind.WITHDRAWN


async def test_nobody_answering_in_time_withdraws_with_the_reason(
        phone: PhoneSource, broker: ApprovalBroker) -> None:
    recorder = Recorder(broker)
    decision = await phone.ask(phone.request_for(PHONE, bash()), within=0.05,
                               expired="Nobody answered; the phone asks instead.")
    assert decision.kind is DecisionKind.WITHDRAWN
    assert decision.message == "Nobody answered; the phone asks instead."
    assert [event for event, _id, _d in recorder.events] == [
        BrokerEvent.ADDED, BrokerEvent.WITHDRAWN]


async def test_the_agent_going_away_withdraws(phone: PhoneSource,
                                              broker: ApprovalBroker) -> None:
    hung_up = asyncio.Event()

    async def gone() -> str:
        await hung_up.wait()
        return "The phone went offline."

    recorder = Recorder(broker)
    request = phone.request_for(PHONE, bash())
    asking = asyncio.create_task(phone.ask(request, gone=gone))
    await asyncio.wait_for(recorder.added.get(), 5)
    hung_up.set()
    decision = await asking
    assert (decision.kind, decision.message) == (DecisionKind.WITHDRAWN,
                                                 "The phone went offline.")


async def test_a_cancelled_ask_is_recorded_as_withdrawn_and_cancelled(
        phone: PhoneSource, broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    request = phone.request_for(PHONE, bash())
    asking = asyncio.create_task(phone.ask(request))
    await asyncio.wait_for(recorder.added.get(), 5)
    asking.cancel()  # an SDK's cancel, an MCP client's notifications/cancelled
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert BrokerEvent.WITHDRAWN in [event for event, _id, _d in recorder.events]
    [entry] = ledger.entries(SESSION, include_tool_events=False)
    assert entry.outcome is DecisionKind.WITHDRAWN


async def test_a_withdrawal_after_the_answer_leaves_the_answer(
        phone: PhoneSource, broker: ApprovalBroker) -> None:
    request = phone.request_for(PHONE, bash())
    asking = asyncio.create_task(phone.ask(request))
    await _until(lambda: broker.is_pending(request.request_id))
    broker.answer(request.request_id, Decision.deny("No."))
    phone.withdraw_where("Too late.")
    decision = await asking
    assert (decision.kind, decision.message) == (DecisionKind.DENY, "No.")


async def test_a_broker_that_fails_is_a_deny(phone: PhoneSource, broker: ApprovalBroker,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*_args: object) -> Decision:
        raise OSError("disk on fire")

    monkeypatch.setattr(broker, "request", broken)
    decision = await phone.ask(phone.request_for(PHONE, bash()))
    assert decision.kind is DecisionKind.ERROR and "disk on fire" in decision.message


# -- the one check -------------------------------------------------------------------------

TYPES = ["addRules", "replaceRules", "removeRules", "setMode", "addDirectories",
         "removeDirectories"]


def _sdk_refuses(update: PermissionSuggestion) -> bool:
    try:
        PermissionUpdate.from_dict(update.to_wire()).to_dict()
    except Exception:
        return True
    return False


@pytest.mark.parametrize(("kind", "rules", "behavior", "mode", "directories"),
                         list(itertools.product(TYPES, [None, (RuleValue(tool_name="Bash"),)],
                                                [None, RuleBehavior.ALLOW],
                                                [None, "acceptEdits"], [None, ("/opt",)])))
async def test_the_one_check_refuses_what_the_claude_sdk_refuses(
        kind: Any, rules: Any, behavior: Any, mode: Any, directories: Any) -> None:
    update = PermissionSuggestion(type=kind, rules=rules, behavior=behavior, mode=mode,
                                  directories=directories, destination="session")
    assert (wire_problem(update) is not None) == _sdk_refuses(update)


async def test_a_list_that_is_not_a_list_is_a_malformed_prompt(phone: PhoneSource) -> None:
    with pytest.raises(ValueError, match="must be a list"):
        phone.request_for(PHONE, bash(suggestions={"type": "addRules"}))


async def _until(condition: Any) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0)
    await asyncio.wait_for(poll(), 5)
