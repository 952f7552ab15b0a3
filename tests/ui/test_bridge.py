"""The broker bridge, with a real broker and SQLite storage, under a qasync loop."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.loop import qt_turns, run, settle

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.approval.pending import PendingApproval
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    DecisionKind,
    SessionInfo,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.ui.bridge import BrokerBridge
from qoder_desktop.ui.event_loop import AppEventLoop


@pytest.fixture
def session(db: Database) -> SessionInfo:
    info = SessionInfo(name="bridge", backend=Backend.CLAUDE, cwd="/tmp")
    db.upsert_session(info)
    return info


@pytest.fixture
def broker(db: Database) -> ApprovalBroker:
    return ApprovalBroker(db, Ledger(db))


@pytest.fixture
def bridge(broker: ApprovalBroker) -> Iterator[BrokerBridge]:
    item = BrokerBridge(broker)
    yield item
    item.unsubscribe()


def bash(info: SessionInfo, command: str = "make") -> ApprovalRequest:
    return ApprovalRequest(session_id=info.session_id, session_name=info.name,
                           backend=info.backend, tool_name="Bash",
                           tool_input={"command": command}, cwd="/tmp")


class Recorder:
    """Collects every bridge signal in order."""

    def __init__(self, bridge: BrokerBridge) -> None:
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        self.pending: list[list[str]] = []
        bridge.approval_added.connect(
            lambda pending: self.events.append(("added", (pending.request,))))
        bridge.pending_changed.connect(
            lambda items: self.pending.append([r.request_id for r in items]))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


def test_request_is_added_and_an_answer_through_the_bridge_completes_it(
        loop: AppEventLoop, broker: ApprovalBroker, bridge: BrokerBridge,
        session: SessionInfo, caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder(bridge)
    request = bash(session)
    decisions: list[bool] = []

    def answer_when_added(added: PendingApproval) -> None:
        # Answer from the Qt side, as a notification's button would: a plain callback.
        loop.call_soon(lambda: decisions.append(
            bridge.answer(added.request_id, Decision.allow_once(added.request.tool_input))))

    bridge.approval_added.connect(answer_when_added)
    decision = run(loop, broker.request(request))
    assert decision.kind is DecisionKind.ALLOW_ONCE
    assert decision.final_input == {"command": "make"}
    assert decisions == [True]
    assert recorder.kinds() == ["added"]
    assert recorder.events[0][1][0] == request
    run(loop, settle(lambda: len(recorder.pending) >= 2))  # may come at the turn's end
    assert recorder.pending == [[request.request_id], []]

    with caplog.at_level(logging.INFO, logger="qoder_desktop.ui.bridge"):
        late = bridge.answer(request.request_id, Decision.deny("too late"))
    assert late is False
    assert "late answer" in caplog.text
    assert recorder.kinds() == ["added"]


def test_a_second_answer_while_pending_is_ignored(
        loop: AppEventLoop, broker: ApprovalBroker, bridge: BrokerBridge,
        session: SessionInfo) -> None:
    request = bash(session, "rm -r build")
    results: list[bool] = []

    def answer_twice(added: PendingApproval) -> None:
        results.append(added.answer(Decision.deny("no")))
        results.append(added.answer(Decision.allow_once(added.request.tool_input)))

    bridge.approval_added.connect(answer_twice)
    decision = run(loop, broker.request(request))
    assert results == [True, False]
    assert decision.kind is DecisionKind.DENY
    assert not bridge.is_pending(request.request_id)


def test_cancellation_takes_the_request_off_the_pending_list(
        loop: AppEventLoop, broker: ApprovalBroker, bridge: BrokerBridge,
        session: SessionInfo) -> None:
    recorder = Recorder(bridge)
    request = bash(session)

    async def cancel_while_waiting() -> None:
        task = asyncio.ensure_future(broker.request(request))
        while not bridge.pending():
            await asyncio.sleep(0.01)
        assert [r.request_id for r in bridge.pending()] == [request.request_id]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(loop, cancel_while_waiting())
    assert recorder.kinds() == ["added"]
    run(loop, settle(lambda: recorder.pending[-1] == []))
    assert recorder.pending[0] == [request.request_id]
    assert bridge.answer(request.request_id, Decision.deny("after the fact")) is False


def test_qt_timers_and_asyncio_share_the_loop(
        loop: AppEventLoop, broker: ApprovalBroker, bridge: BrokerBridge,
        session: SessionInfo) -> None:
    from PySide6.QtCore import QTimer

    request = bash(session)
    bridge.approval_added.connect(lambda added: QTimer.singleShot(
        20, lambda: bridge.answer(added.request_id, Decision.deny("by a Qt timer"))))
    decision = run(loop, broker.request(request))
    assert decision.message == "by a Qt timer"


def test_unsubscribe_stops_the_signals(
        loop: AppEventLoop, broker: ApprovalBroker, bridge: BrokerBridge,
        session: SessionInfo) -> None:
    recorder = Recorder(bridge)
    bridge.unsubscribe()
    bridge.unsubscribe()
    request = bash(session)

    async def ask_and_answer() -> Decision:
        task = asyncio.ensure_future(broker.request(request))
        while not broker.is_pending(request.request_id):
            await asyncio.sleep(0.01)
        assert bridge.answer(request.request_id, Decision.deny("quiet"))
        return await task

    assert run(loop, ask_and_answer()).kind is DecisionKind.DENY
    assert recorder.events == []


def test_pending_changed_comes_at_once_then_once_more_per_turn_with_the_last_state(
        loop: AppEventLoop, broker: ApprovalBroker, bridge: BrokerBridge,
        session: SessionInfo) -> None:
    """A lone request reaches the listeners at once; twenty withdrawn in one turn (a
    session stopping) are folded into a single further emission with the final list."""
    recorder = Recorder(bridge)
    requests = [bash(session, f"job {n}") for n in range(20)]

    async def scenario() -> None:
        tasks = [asyncio.ensure_future(broker.request(request)) for request in requests]
        await settle(lambda: len(broker.pending()) == 20)
        await settle(lambda: bool(recorder.pending) and len(recorder.pending[-1]) == 20)
        assert len(recorder.pending) <= 20
        recorder.pending.clear()
        assert broker.withdraw_session(session.session_id) == 20
        await asyncio.gather(*tasks, return_exceptions=True)
        await settle(lambda: bool(recorder.pending) and recorder.pending[-1] == [])

    run(loop, scenario())
    assert recorder.kinds() == ["added"] * 20
    assert 1 <= len(recorder.pending) <= 2  # not one per withdrawal
    assert recorder.pending[-1] == []

    lone = bash(session, "lone")
    seen: list[list[str]] = []

    async def one() -> None:
        await qt_turns()  # a new turn, after the last held-back emission
        task = asyncio.ensure_future(broker.request(lone))
        while not broker.is_pending(lone.request_id):
            await asyncio.sleep(0)
        # emitted synchronously with the broker's event, not a turn later
        seen.append(list(recorder.pending[-1]))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    run(loop, one())
    assert seen == [[lone.request_id]]


def test_unsubscribe_drops_a_held_back_pending_changed(
        loop: AppEventLoop, broker: ApprovalBroker, bridge: BrokerBridge,
        session: SessionInfo) -> None:
    recorder = Recorder(bridge)
    requests = [bash(session, command) for command in ("a", "b", "c")]
    withdrawn: list[str] = []
    emitted_before_unsubscribe: list[int] = []

    def after_the_bridge(event: BrokerEvent, request: ApprovalRequest, _d: object) -> None:
        if event is BrokerEvent.WITHDRAWN:
            withdrawn.append(request.request_id)
            if len(withdrawn) == len(requests):  # the same turn as the held-back ones
                emitted_before_unsubscribe.append(len(recorder.pending))
                bridge.unsubscribe()

    broker.subscribe(after_the_bridge)

    async def scenario() -> None:
        tasks = [asyncio.ensure_future(broker.request(request)) for request in requests]
        await settle(lambda: bool(recorder.pending) and len(recorder.pending[-1]) == 3)
        await qt_turns()  # nothing held back any more
        recorder.pending.clear()
        broker.withdraw_session(session.session_id)
        await asyncio.gather(*tasks, return_exceptions=True)
        await qt_turns()  # a held-back emission would have come by now

    run(loop, scenario())
    assert len(withdrawn) == 3
    assert emitted_before_unsubscribe and emitted_before_unsubscribe[0] < 3  # folded
    assert len(recorder.pending) == emitted_before_unsubscribe[0]  # none after it
