"""What a session's rules decide about a request: a deny rule denies, an allow rule only
tells the person which rule covers it, and a grant keeps only what the CLI would take.
The rules live in the real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoder_desktop.approval.rule_decisions import (
    decide_by_rule,
    deliverable_grant,
    sibling_outcome,
)
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
)
from qoder_desktop.store.database import Database

SESSION = "session-1"


@pytest.fixture
def db(db: Database) -> Database:
    """The store with the two sessions the rules belong to."""
    for session in (SESSION, "other"):
        db.upsert_session(SessionInfo(session_id=session, name=session, backend=Backend.CLAUDE,
                                      cwd="/tmp/ws"))
    return db


def _request(tool: str = "Bash", cwd: str = "/tmp/ws", session: str = SESSION,
             **tool_input: object) -> ApprovalRequest:
    return ApprovalRequest(session_id=session, session_name="demo", backend=Backend.CLAUDE,
                           tool_name=tool, tool_input=dict(tool_input), cwd=cwd)


def _rule(text: str, behavior: RuleBehavior = RuleBehavior.ALLOW,
          session: str = SESSION) -> SessionRule:
    return SessionRule(session_id=session, behavior=behavior, rule=RuleValue.parse(text))


def _grant(*texts: str, behavior: RuleBehavior = RuleBehavior.ALLOW) -> PermissionSuggestion:
    return PermissionSuggestion(type="addRules", behavior=behavior,
                                rules=tuple(RuleValue.parse(text) for text in texts),
                                destination="session")


# -- a new request and the session's rules -----------------------------------------------


def test_a_deny_rule_denies_and_says_which_rule(db: Database) -> None:
    db.add_rules([_rule("Bash(rm:*)", RuleBehavior.DENY)])
    request = _request(command="rm -rf build")
    same, decision = decide_by_rule(db, request)
    assert same is request
    assert decision is not None and decision.kind is DecisionKind.DENY
    assert decision.decided_by is DecidedBy.SESSION_RULE
    assert decision.message == "Denied by the session rule Bash(rm:*)."
    assert decision.rule == "Bash(rm:*)"


def test_an_allow_rule_never_answers_it_only_names_the_rule_for_the_person(
        db: Database) -> None:
    """The CLI holds the grant; a request that reaches us anyway was escalated on
    purpose, so a person decides, told which of their rules covers it."""
    db.add_rules([_rule("Bash(make:*)")])
    marked, decision = decide_by_rule(db, _request(command="make test"))
    assert decision is None
    assert marked.covered_by_rule == "Bash(make:*)"
    assert not marked.granted_while_waiting


def test_a_request_no_rule_covers_waits_unmarked(db: Database) -> None:
    db.add_rules([_rule("Bash(make:*)")])
    request = _request(command="git push")
    assert decide_by_rule(db, request) == (request, None)


def test_another_sessions_rules_decide_nothing(db: Database) -> None:
    db.add_rules([_rule("Bash(rm:*)", RuleBehavior.DENY, session="other")])
    request = _request(command="rm -rf build")
    assert decide_by_rule(db, request) == (request, None)


def test_a_revoked_deny_rule_decides_nothing(db: Database) -> None:
    rule = _rule("Bash(rm:*)", RuleBehavior.DENY)
    db.add_rules([rule.model_copy(update={"revoked_at": rule.granted_at})])
    request = _request(command="rm -rf build")
    assert decide_by_rule(db, request) == (request, None)


@pytest.mark.parametrize("tool", ["AskUserQuestion", "ExitPlanMode"])
def test_questions_and_plans_are_never_decided_by_a_rule(db: Database, tool: str) -> None:
    db.add_rules([_rule(tool, RuleBehavior.DENY)])
    request = _request(tool)
    assert decide_by_rule(db, request) == (request, None)


def test_a_sensitive_file_under_an_edit_rule_is_marked_for_the_person(
        db: Database, tmp_path: Path) -> None:
    """The CLI asks about a file like .env under any rule; the person is shown the rule
    that names it, and still decides."""
    db.add_rules([_rule("Edit(./**)")])
    marked, decision = decide_by_rule(db, _request(
        "Edit", cwd=str(tmp_path), file_path=str(tmp_path / ".env"), old_string="a",
        new_string="b"))
    assert decision is None
    assert marked.covered_by_rule == "Edit(./**)"


# -- requests already waiting when a person grants rules ----------------------------------


def test_a_new_deny_rule_denies_a_waiting_request_it_covers() -> None:
    outcome = sibling_outcome([_rule("Bash(rm:*)", RuleBehavior.DENY)],
                              _request(command="rm -rf build"))
    assert isinstance(outcome, Decision)
    assert outcome.kind is DecisionKind.DENY and outcome.decided_by is DecidedBy.SESSION_RULE


def test_a_new_allow_rule_marks_a_waiting_request_and_never_allows_it() -> None:
    outcome = sibling_outcome([_rule("Bash(make:*)")], _request(command="make lint"))
    assert isinstance(outcome, ApprovalRequest)
    assert outcome.covered_by_rule == "Bash(make:*)" and outcome.granted_while_waiting


def test_a_waiting_request_already_marked_keeps_its_explanation() -> None:
    waiting = _request(command="make lint").model_copy(
        update={"covered_by_rule": "Bash(make lint)"})
    assert sibling_outcome([_rule("Bash(make:*)")], waiting) is None


@pytest.mark.parametrize("waiting", [
    _request(command="git push"),  # not covered
    _request(command="make lint", session="other"),  # another session's request
    _request("AskUserQuestion"),  # a question is never decided by a rule
])
def test_a_grant_leaves_other_waiting_requests_alone(waiting: ApprovalRequest) -> None:
    assert sibling_outcome([_rule("Bash(make:*)"), _rule("AskUserQuestion")], waiting) is None


def test_no_grant_changes_nothing() -> None:
    assert sibling_outcome([], _request(command="make")) is None


# -- what a person's grant sends to the CLI -----------------------------------------------


def test_a_grant_keeps_what_the_cli_takes_and_drops_the_rest() -> None:
    good, wildcard = _grant("Bash(make:*)"), _grant("Bash(*)")
    bypass = PermissionSuggestion(type="setMode", mode="bypassPermissions",
                                  destination="session")
    decision = Decision.allow_session({"command": "make"}, (good, wildcard, bypass))
    kept = deliverable_grant(_request(command="make"), decision, None)
    assert kept.updates == (good,)  # a Tool(*) rule and a mode that stops asking go
    assert kept.kind is DecisionKind.ALLOW_SESSION and kept.final_input == {"command": "make"}


def test_a_grant_the_agents_sdk_cannot_deliver_is_dropped() -> None:
    first, second = _grant("Bash(make:*)"), _grant("Read(/etc/**)")
    decision = Decision.allow_session({"command": "make"}, (first, second))
    kept = deliverable_grant(
        _request(command="make"), decision,
        lambda update: "not for this SDK" if update is second else None)
    assert kept.updates == (first,)


def test_a_grant_the_cli_takes_whole_is_the_same_decision() -> None:
    decision = Decision.allow_session({"command": "make"}, (_grant("Bash(make:*)"),))
    assert deliverable_grant(_request(command="make"), decision, lambda _u: None) is decision
