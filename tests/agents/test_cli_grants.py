"""A call the agent's CLI ran under a session grant gets an approval row decided by the CLI,
with the allow rule our matcher reads it as; nothing is written when no rule covers it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qoder_desktop.agents.cli_grants import record_run_under_grant
from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.agents.qoder import QoderSession
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.kinds import RuleBehavior
from qoder_desktop.domain.models import (
    Backend,
    DecidedBy,
    DecisionKind,
    RuleValue,
    SessionInfo,
    SessionRule,
)
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Database, Ledger]]:
    """A real SQLite ledger under tmp_path."""
    db = Database.open(tmp_path / "ledger.sqlite3")
    try:
        yield db, Ledger(db)
    finally:
        db.close()


def _session(db: Database, ledger: Ledger, cwd: Path, *rules: tuple[RuleBehavior, str],
             ) -> QoderSession:
    """A real (unstarted) session reporting to a real hub, saved with its rules."""
    info = SessionInfo(name="grants", backend=Backend.QODER, cwd=str(cwd))
    db.upsert_session(info)
    db.add_rules(SessionRule(session_id=info.session_id, behavior=behavior,
                             rule=RuleValue.parse(text)) for behavior, text in rules)
    options = SessionOptions(backend=Backend.QODER, prompt="Go ahead.", cwd=str(cwd))
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, QoderSession)
    return QoderSession(info, options, broker, hub)


def _approvals(db: Database, ledger: Ledger, session_id: str) -> list[Any]:
    db.flush()
    return [e for e in ledger.entries(session_id) if e.entry_type == "approval"]


def test_a_call_an_allow_rule_covers_is_recorded_as_decided_by_the_cli(
        store: tuple[Database, Ledger], tmp_path: Path) -> None:
    """The row says the CLI allowed it, and names the rule we read its grant as."""
    db, ledger = store
    session = _session(db, ledger, tmp_path, (RuleBehavior.ALLOW, "Bash(touch marker.txt)"))

    record_run_under_grant(db, ledger, session, "toolu_1", "Bash",
                           {"command": "touch marker.txt"})

    [row] = _approvals(db, ledger, session.session_id)
    assert (row.outcome, row.decided_by) == (DecisionKind.ALLOW_ONCE, DecidedBy.CLI)
    assert row.matched_rule == "Bash(touch marker.txt)"
    assert row.tool_use_id == "toolu_1"
    assert row.session_name == "grants"
    assert row.original_input == {"command": "touch marker.txt"}


@pytest.mark.parametrize(("rules", "command"), [
    ((), "touch marker.txt"),
    (((RuleBehavior.ALLOW, "Bash(touch marker.txt)"),), "rm -rf build"),
    (((RuleBehavior.DENY, "Bash(touch marker.txt)"),), "touch marker.txt"),
], ids=["no rules", "allow rule for another command", "only a deny rule"])
def test_nothing_is_written_when_no_allow_rule_covers_the_call(
        store: tuple[Database, Ledger], tmp_path: Path,
        rules: tuple[tuple[RuleBehavior, str], ...], command: str) -> None:
    """We never claim a grant the session does not hold."""
    db, ledger = store
    session = _session(db, ledger, tmp_path, *rules)

    record_run_under_grant(db, ledger, session, "toolu_1", "Bash", {"command": command})

    assert _approvals(db, ledger, session.session_id) == []


def test_nothing_is_written_for_a_call_without_an_id(
        store: tuple[Database, Ledger], tmp_path: Path) -> None:
    """A row without a tool id could not be paired with its call; none is written."""
    db, ledger = store
    session = _session(db, ledger, tmp_path, (RuleBehavior.ALLOW, "Bash(touch marker.txt)"))

    record_run_under_grant(db, ledger, session, None, "Bash", {"command": "touch marker.txt"})

    assert _approvals(db, ledger, session.session_id) == []


def test_nothing_is_written_under_a_revoked_allow_rule(
        store: tuple[Database, Ledger], tmp_path: Path) -> None:
    """Once the person revokes the rule, we no longer read a call as run under it."""
    db, ledger = store
    session = _session(db, ledger, tmp_path, (RuleBehavior.ALLOW, "Bash(touch marker.txt)"))
    [rule] = db.active_rules(session.session_id)
    db.revoke_rule(rule.rule_id)

    record_run_under_grant(db, ledger, session, "toolu_1", "Bash",
                           {"command": "touch marker.txt"})

    assert _approvals(db, ledger, session.session_id) == []
