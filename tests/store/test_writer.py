"""Writes off the event loop (a slow disk must not freeze the dialogs): the store's one
writer thread.

A large question is written while the loop keeps serving; a decision is committed before
the broker returns it; tool events seen by hooks are queued without waiting and are all
in the ledger when it is read or the database closes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from helpers.broker_events import watch_decision_writes

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

BIG = "x" * (10 * 1024 * 1024)


def _question(text: str = "Which one?") -> ApprovalRequest:
    return ApprovalRequest(
        session_id="s1", session_name="Demo", backend=Backend.CLAUDE,
        tool_name="AskUserQuestion",
        tool_input={"questions": [{"question": text, "header": "Pick", "multiSelect": False,
                                   "options": [{"label": "A", "description": BIG},
                                               {"label": "B", "description": "b"}]}]})


def _writes_by_thread(db: Database) -> list[tuple[str, str]]:
    """(thread name, statement) of every INSERT/UPDATE the connection runs from now on."""
    seen: list[tuple[str, str]] = []

    def trace(statement: str) -> None:
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE")):
            seen.append((threading.current_thread().name, statement.split()[0].upper()))

    db._connection().set_trace_callback(trace)
    return seen


@pytest.mark.asyncio
async def test_a_10_mb_question_is_written_off_the_loop_and_the_loop_keeps_serving(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    writing = watch_decision_writes(ledger, monkeypatch)
    writes = _writes_by_thread(db)
    gate = threading.Event()
    db.writer.post(lambda: gate.wait(30))  # the disk is busy with something else first
    answered: list[object] = []
    broker.subscribe(lambda event, request, decision: answered.append(event))
    task = asyncio.ensure_future(broker.request(_question()))
    while not broker.pending():  # the person is asked while the disk is still busy
        await asyncio.sleep(0.005)
    [pending] = broker.pending()
    broker.answer(pending.request_id, Decision.deny("not now"))
    # The loop goes on serving while the writes wait on the disk: the broker gets to
    # writing the decision, and this test runs on meanwhile …
    await asyncio.wait_for(writing.wait(), 10)
    assert not task.done() and answered == [BrokerEvent.ADDED]  # … the answer waits for them
    gate.set()
    decision = await task
    assert decision.kind is DecisionKind.DENY
    assert answered == [BrokerEvent.ADDED, BrokerEvent.ANSWERED]
    loop_thread = threading.current_thread().name
    assert writes and all(name != loop_thread for name, _ in writes)
    [entry] = ledger.entries()
    assert entry.outcome is DecisionKind.DENY
    assert entry.original_input is not None
    assert entry.original_input["questions"][0]["options"][0]["description"] == BIG


@pytest.mark.asyncio
async def test_a_decision_is_committed_before_the_broker_returns_it(
        db: Database, tmp_path: Path) -> None:
    broker = ApprovalBroker(db, Ledger(db))
    task = asyncio.ensure_future(broker.request(_question("Now?")))
    while not broker.pending():
        await asyncio.sleep(0.005)
    [pending] = broker.pending()
    broker.answer(pending.request_id, Decision.deny("no"))
    await task
    # Another connection (as after a crash): the row is there, decided, without a flush.
    other = sqlite3.connect(db.path)
    try:
        rows = other.execute("SELECT outcome FROM approvals WHERE request_id = ?",
                             (pending.request_id,)).fetchall()
    finally:
        other.close()
    assert rows == [("deny",)]


@pytest.mark.asyncio
async def test_tool_events_are_queued_without_waiting_and_none_is_lost(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "events.sqlite3")
    ledger = Ledger(db)
    writes = _writes_by_thread(db)
    gate = threading.Event()
    db.writer.post(lambda: gate.wait(30))  # the writer is busy: posting must not wait
    for n in range(300):
        ledger.post_tool_event("s1", f"toolu_{n}", "Bash", {"command": f"touch {n}"},
                               "PreToolUse" if n % 2 == 0 else "PostToolUse")
    assert writes == []  # nothing written yet, and the caller was not held up
    gate.set()
    db.close()  # writes what is queued before the connection closes
    with Database.open(tmp_path / "events.sqlite3") as again:
        events = Ledger(again).entries()
    assert [e.tool_use_id for e in events] == [f"toolu_{n}" for n in range(300)]
    assert {e.status for e in events} == {"PreToolUse", "PostToolUse"}
    assert writes and all(name == "qoder-desktop-store-writer" for name, _ in writes)


def test_a_failing_queued_write_is_logged_and_the_others_are_kept(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    ledger = Ledger(db)
    gate = threading.Event()
    db.writer.post(lambda: gate.wait(30))
    ledger.post_tool_event("s1", "toolu_a", "Read", {"file_path": "/a"}, "PreToolUse")
    db.writer.post(lambda: db.execute("INSERT INTO no_such_table VALUES (1)"))
    ledger.post_tool_event("s1", "toolu_b", "Read", {"file_path": "/b"}, "PostToolUse")
    gate.set()
    assert [e.tool_use_id for e in ledger.entries()] == ["toolu_a", "toolu_b"]
    assert "a store write failed" in caplog.text


def test_a_tool_event_with_an_unknown_phase_is_refused_at_once(db: Database) -> None:
    with pytest.raises(ValueError):
        Ledger(db).post_tool_event("s1", None, "Read", {}, "NotAHook")


def test_a_hook_and_a_cached_rule_read_never_wait_for_a_write_in_progress(db: Database) -> None:
    # A write holds the store's lock for its whole transaction (and its fsync). A tool
    # call's hook queues its ledger row, and the broker reads the session's (cached)
    # rules, while such a write is under way: neither may wait for it.
    from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionInfo, SessionRule

    db.upsert_session(SessionInfo(session_id="s1", name="Demo", backend=Backend.CLAUDE,
                                  cwd="/tmp"))
    db.add_rules([SessionRule(session_id="s1", behavior=RuleBehavior.ALLOW,
                              rule=RuleValue.parse("Bash(ls)"))])
    assert len(db.active_rules("s1")) == 1  # now cached
    ledger = Ledger(db)
    ledger.post_tool_event("s1", "toolu_0", "Bash", {"command": "ls"}, "PreToolUse")
    writing, release = threading.Event(), threading.Event()

    def long_write() -> None:
        with db.transaction("a long write"):
            writing.set()
            release.wait(30)

    writer = threading.Thread(target=long_write)
    writer.start()
    assert writing.wait(10)
    done: list[list[SessionRule]] = []

    def hook_work() -> None:
        ledger.post_tool_event("s1", "toolu_1", "Bash", {"command": "ls"}, "PreToolUse")
        done.append(db.active_rules("s1"))

    hook = threading.Thread(target=hook_work)
    hook.start()
    hook.join(10)
    still_waiting = hook.is_alive()
    release.set()
    writer.join(10)
    hook.join(10)
    assert not still_waiting, "the hook waited for the write in progress"
    assert [len(rules) for rules in done] == [1]
    assert [e.tool_use_id for e in ledger.entries()] == ["toolu_0", "toolu_1"]
