"""Revoked allow rules stay "on their way" until an answer carried their removal to the
agent's CLI, then "delivered"; that survives a restart of the app (a terminal agent
outlives it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from qoder_desktop.agents.hub import HubEvent, HubEventKind, SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import (
    Backend,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.store.removals import mark_delivered, removals_due
from qoder_desktop.store.schema import MIGRATIONS


def _session(db: Database) -> SessionInfo:
    info = SessionInfo(name="Claude Code · p", backend=Backend.TERMINAL, cwd="/work/p",
                       state=SessionState.RUNNING)
    db.upsert_session(info)
    return info


def _rule(info: SessionInfo, text: str, behavior: RuleBehavior = RuleBehavior.ALLOW
          ) -> SessionRule:
    return SessionRule(session_id=info.session_id, behavior=behavior,
                       rule=RuleValue.parse(text))


def test_a_revoked_allow_rule_is_due_until_delivered_and_stays_delivered(
        tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    with Database.open(path) as db:
        info = _session(db)
        allow, deny, kept = (_rule(info, "Bash(touch marker.txt)"),
                             _rule(info, "Bash(rm:*)", RuleBehavior.DENY),
                             _rule(info, "Read"))
        db.add_rules([allow, deny, kept])
        assert removals_due(db, info.session_id) == []
        assert mark_delivered(db, [kept.rule_id]) == 0  # an active rule has nothing to send
        db.revoke_rule(allow.rule_id)
        db.revoke_rule(deny.rule_id)  # our own deny rule: never sent to the CLI
        [due] = removals_due(db, info.session_id)
        assert due.rule_id == allow.rule_id and due.removal_pending
        assert mark_delivered(db, [allow.rule_id, allow.rule_id]) == 1
        assert mark_delivered(db, [allow.rule_id]) == 0
    with Database.open(path) as db:  # the app restarted
        assert removals_due(db, info.session_id) == []
        rule = db.get_rule(allow.rule_id)
        assert rule is not None and rule.removal_delivered_at is not None
        assert not rule.removal_pending and not rule.active


def test_a_database_of_the_first_schema_gains_the_delivery_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("INSERT INTO sessions VALUES ('s', 'n', 'terminal', '/', 'default', "
                 "'running', NULL, '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')")
    conn.execute("INSERT INTO session_rules (rule_id, session_id, behavior, tool_name, "
                 "rule_content, granted_by, granted_at, revoked_at) VALUES ('r', 's', "
                 "'allow', 'Read', NULL, 'user', '2026-01-01T00:00:00+00:00', "
                 "'2026-01-01T00:01:00+00:00')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Database.open(path) as db:
        assert db.schema_version == len(MIGRATIONS)
        [rule] = removals_due(db, "s")  # revoked before the upgrade: still on its way
        assert rule.removal_delivered_at is None


def test_the_hub_publishes_the_rules_again_once_a_removal_is_delivered(db: Database) -> None:
    ledger = Ledger(db)
    hub = SessionHub(db, ledger, ApprovalBroker(db, ledger),
                     lambda *args: None)  # type: ignore[arg-type,return-value]
    info = hub.terminal_session("cli-1", "Claude Code", "/work/p")
    rule = _rule(info, "Bash(touch marker.txt)")
    db.add_rules([rule])
    events: list[HubEvent] = []
    hub.subscribe(events.append)
    hub.revoke_rule(rule.rule_id)
    assert [r.rule_id for r in hub.removals_due(info.session_id)] == [rule.rule_id]
    hub.removals_delivered(info.session_id, [rule.rule_id])
    hub.removals_delivered(info.session_id, [rule.rule_id])  # nothing new: no event
    published = [e for e in events if e.kind is HubEventKind.RULES]
    assert len(published) == 2  # the revoke, then the delivery
    [shown] = published[-1].rules
    assert shown.removal_delivered_at is not None
    assert hub.removals_due(info.session_id) == []
