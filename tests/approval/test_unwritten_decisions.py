"""A full disk or a read-only database: the call is denied (fail closed), the outcome
is kept in memory, and written once the disk takes writes again, without a restart."""

from __future__ import annotations

import asyncio
import logging

import pytest
from helpers.disk_faults import fill_disk, free_disk, make_read_only
from helpers.loop import settle

from qoder_desktop.approval import unwritten
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

pytestmark = pytest.mark.asyncio


def _write(path: str, size: int) -> ApprovalRequest:
    return ApprovalRequest(session_id="session-1", session_name="demo",
                           backend=Backend.CLAUDE, tool_name="Write",
                           tool_input={"file_path": path, "content": "x" * size}, cwd="/tmp/ws")


async def _asked(broker: ApprovalBroker, ledger: Ledger,
                 request: ApprovalRequest) -> asyncio.Task[Decision]:
    task = asyncio.create_task(broker.request(request))
    while not ledger.pending("session-1") or not broker.is_pending(request.request_id):
        await asyncio.sleep(0.01)  # the request's row is written (a person looks at it)
    return task


def _events(broker: ApprovalBroker) -> list[tuple[BrokerEvent, str, Decision | None]]:
    seen: list[tuple[BrokerEvent, str, Decision | None]] = []
    broker.subscribe(lambda event, request, decision: seen.append(
        (event, request.request_id, decision)))
    return seen


async def test_a_full_disk_denies_the_allow_keeps_it_and_writes_it_when_room_is_back(
        broker: ApprovalBroker, ledger: Ledger, db: Database) -> None:
    events = _events(broker)
    first = _write("/tmp/ws/a.txt", 20_000)
    task = await _asked(broker, ledger, first)
    fill_disk(db)
    broker.answer(first.request_id, Decision.allow_once(dict(first.tool_input)))
    decision = await task
    # Fail closed: the agent gets a deny that says why.
    assert decision.kind is DecisionKind.ERROR and not decision.kind.allows
    assert "the disk is full" in (decision.message or "")
    # The person is told (UNRECORDED before ANSWERED), and it is kept in memory.
    kinds = [event for event, rid, _ in events if rid == first.request_id]
    assert kinds[-2:] == [BrokerEvent.UNRECORDED, BrokerEvent.ANSWERED]
    [kept] = broker.unwritten()
    assert kept.by_person and "the disk is full" in kept.reason
    assert kept.request.request_id == first.request_id
    assert [e.entry_id for e in ledger.pending("session-1")] == [first.request_id]

    free_disk(db)  # room again: the next decision is written, and the kept one with it
    second = _write("/tmp/ws/b.txt", 10)
    task = await _asked(broker, ledger, second)
    broker.answer(second.request_id, Decision.deny("not now"))
    assert (await task).kind is DecisionKind.DENY
    await settle(lambda: not broker.unwritten())
    assert ledger.pending("session-1") == []
    entry = next(e for e in ledger.entries("session-1") if e.entry_id == first.request_id)
    assert entry.outcome is DecisionKind.ERROR and entry.decided_by is DecidedBy.ERROR
    assert "the disk is full" in (entry.message or "")
    assert (BrokerEvent.RECORDED_LATE, first.request_id, decision) in events


async def test_a_read_only_database_recovers_on_its_own_without_another_request(
        broker: ApprovalBroker, ledger: Ledger, db: Database,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """With nothing else to write, the kept outcome is tried again every RETRY_S."""
    monkeypatch.setattr(unwritten, "RETRY_S", 0.05)
    events = _events(broker)
    request = _write("/tmp/ws/c.txt", 10)
    task = await _asked(broker, ledger, request)
    make_read_only(db)
    broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    decision = await task
    assert decision.kind is DecisionKind.ERROR
    assert "read-only" in broker.unwritten()[0].reason
    with caplog.at_level(logging.INFO, logger="qoder_desktop.approval.unwritten"):
        while sum("still takes no writes" in r.getMessage() for r in caplog.records) < 2:
            await asyncio.sleep(0.01)  # retries fail while it stays read-only
    assert len(broker.unwritten()) == 1
    make_read_only(db, False)
    while not any(event is BrokerEvent.RECORDED_LATE for event, _, _ in events):
        await asyncio.sleep(0.01)
    assert ledger.pending("session-1") == []
    [entry] = [e for e in ledger.entries("session-1") if e.entry_id == request.request_id]
    assert entry.outcome is DecisionKind.ERROR


async def test_a_request_the_full_disk_cannot_hold_is_denied_and_recorded_later(
        broker: ApprovalBroker, ledger: Ledger, db: Database) -> None:
    """A new request whose row cannot be written: denied at once, told, kept."""
    events = _events(broker)
    fill_disk(db)
    request = _write("/tmp/ws/d.txt", 20_000)
    decision = await asyncio.wait_for(broker.request(request), 10)
    assert decision.kind is DecisionKind.ERROR
    [kept] = broker.unwritten()
    assert not kept.by_person  # nobody answered: the request itself was not recorded
    assert (BrokerEvent.UNRECORDED, request.request_id, decision) in events
    free_disk(db)
    db.execute("DROP TABLE filler")
    other = _write("/tmp/ws/e.txt", 10)
    task = await _asked(broker, ledger, other)
    broker.answer(other.request_id, Decision.deny("no"))
    await task
    while broker.unwritten():
        await asyncio.sleep(0.01)
    entry = next(e for e in ledger.entries("session-1") if e.entry_id == request.request_id)
    assert entry.outcome is DecisionKind.ERROR and entry.original_input == request.tool_input
