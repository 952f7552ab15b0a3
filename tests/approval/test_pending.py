"""One approval's life (`PendingApproval`): asked → shown → answered | withdrawn | timed
out, the first end wins, and its ledger row is written once, in order: the request's
row (held until its dialog has painted, never longer than `ROW_HOLD_MAX_S`), then the
outcome's."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future

import pytest
from helpers.broker_events import SESSION, Recorder, bash_request

from qoder_desktop.approval import pending as pending_module
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.approval.pending import (
    ApprovalState,
    IllegalTransition,
    PendingApproval,
    PendingEvent,
)
from qoder_desktop.domain.models import (
    ApprovalRequest,
    DecidedBy,
    Decision,
    DecisionKind,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

pytestmark = pytest.mark.asyncio


class CountedLedger(Ledger):
    """The real SQLite ledger, saying which of its writes were asked for, in order."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.calls: list[str] = []

    def start_request(self, request: ApprovalRequest) -> Future[None]:
        self.calls.append(f"request {request.request_id}")
        return super().start_request(request)

    async def write_decision(self, request: ApprovalRequest, decision: Decision,
                             latency_ms: float | None = None, *,
                             request_written: Future[None]) -> None:
        self.calls.append(f"outcome {request.request_id}")
        await super().write_decision(request, decision, latency_ms,
                                     request_written=request_written)


@pytest.fixture
def counted(ledger: Ledger, db: Database) -> CountedLedger:
    return CountedLedger(db)


def _watch(pending: PendingApproval) -> list[tuple[PendingEvent, ApprovalState]]:
    seen: list[tuple[PendingEvent, ApprovalState]] = []
    pending.observe(lambda approval, event: seen.append((event, approval.state)))
    return seen


def _row_written(db: Database, ledger: Ledger, request_id: str) -> bool:
    db.writer.flush()
    return any(entry.entry_id == request_id for entry in ledger.entries(SESSION))


async def test_asked_then_shown_then_answered_each_move_told_and_awaited(
        counted: CountedLedger) -> None:
    pending = PendingApproval(bash_request("make"), counted)
    seen = _watch(pending)
    answered = asyncio.ensure_future(pending.answered())
    assert pending.state is ApprovalState.ASKED and pending.decision is None
    assert pending.mark_shown()
    await asyncio.wait_for(pending.shown(), 5)
    assert not answered.done()
    decision = Decision.allow_once({"command": "make"})
    assert pending.answer(decision)
    assert await asyncio.wait_for(answered, 5) is decision
    assert seen == [(PendingEvent.SHOWN, ApprovalState.SHOWN),
                    (PendingEvent.ANSWERED, ApprovalState.ANSWERED)]
    assert pending.reason == decision.message


async def test_the_first_answer_wins_and_later_moves_are_refused(
        counted: CountedLedger) -> None:
    pending = PendingApproval(bash_request("rm -rf build"), counted)
    seen = _watch(pending)
    first = Decision.deny("not the build folder")
    assert pending.answer(first)
    assert not pending.answer(Decision.allow_once({"command": "rm -rf build"}))
    assert not pending.withdraw("the agent went away")
    assert not pending.time_out()
    assert not pending.mark_shown()  # an end is never shown again
    assert not pending.update(bash_request("rm -rf build"))
    assert pending.state is ApprovalState.ANSWERED and pending.decision is first
    assert await pending.answered() is first
    assert seen == [(PendingEvent.ANSWERED, ApprovalState.ANSWERED)]


async def test_a_withdrawal_after_the_answer_is_ignored_and_before_it_ends_the_approval(
        counted: CountedLedger) -> None:
    answered = PendingApproval(bash_request("ls"), counted)
    answered.answer(Decision.deny("no"))
    assert not answered.withdraw()
    assert answered.decision is not None and answered.decision.kind is DecisionKind.DENY

    withdrawn = PendingApproval(bash_request("ls -l"), counted)
    seen = _watch(withdrawn)
    assert withdrawn.mark_shown()
    assert withdrawn.withdraw("answered in the terminal")
    assert not withdrawn.answer(Decision.allow_once({"command": "ls -l"}))
    assert withdrawn.state is ApprovalState.WITHDRAWN
    assert (await withdrawn.answered()).message == "answered in the terminal"
    assert [event for event, _ in seen] == [PendingEvent.SHOWN, PendingEvent.WITHDRAWN]


async def test_a_time_out_denies_and_no_answer_after_it_allows(
        counted: CountedLedger) -> None:
    pending = PendingApproval(bash_request("make deploy"), counted)
    assert pending.time_out()
    assert not pending.answer(Decision.allow_once({"command": "make deploy"}))
    decision = await pending.answered()
    assert pending.state is ApprovalState.TIMED_OUT
    assert not decision.kind.allows and decision.decided_by is DecidedBy.ERROR


async def test_moves_the_machine_does_not_have_are_refused(counted: CountedLedger) -> None:
    pending = PendingApproval(bash_request("make"), counted)
    with pytest.raises(ValueError):
        pending.answer(Decision.withdrawn())  # a withdrawal is not an answer
    with pytest.raises(IllegalTransition):
        await pending.record(Decision.deny("no"), 1.0)  # no outcome before the end
    assert pending.mark_shown()
    assert not pending.mark_shown()  # shown once
    with pytest.raises(IllegalTransition):
        pending._enter(ApprovalState.ASKED)  # never back
    assert pending.state is ApprovalState.SHOWN


async def test_a_newer_state_of_the_request_is_told_while_it_waits(
        counted: CountedLedger) -> None:
    request = bash_request("npm test")
    pending = PendingApproval(request, counted)
    seen = _watch(pending)
    marked = request.model_copy(update={"covered_by_rule": "Bash(npm test)"})
    assert pending.update(marked)
    assert pending.request is marked and seen == [(PendingEvent.UPDATED, ApprovalState.ASKED)]
    assert not pending.update(bash_request("other"))  # another request's state: refused


async def test_an_observer_that_fails_keeps_the_others_told(counted: CountedLedger) -> None:
    pending = PendingApproval(bash_request("make"), counted)

    def broken(_approval: PendingApproval, _event: PendingEvent) -> None:
        raise RuntimeError("a view broke")

    pending.observe(broken)
    seen = _watch(pending)
    assert pending.answer(Decision.deny("no"))
    assert seen == [(PendingEvent.ANSWERED, ApprovalState.ANSWERED)]


async def test_the_ledger_rows_are_written_once_request_first(
        counted: CountedLedger, db: Database) -> None:
    request = bash_request("make")
    pending = PendingApproval(request, counted)
    assert pending.hold_row_until_shown()  # its dialog is on its way
    pending.queue_row_unless_held()
    assert counted.calls == []  # held: the dialog paints first
    pending.mark_shown()
    pending.queue_row()  # a second queue does nothing
    decision = Decision.deny("no")
    pending.answer(decision)
    await pending.record(decision, 3.0)
    with pytest.raises(IllegalTransition):
        await pending.record(decision, 3.0)
    assert counted.calls == [f"request {request.request_id}", f"outcome {request.request_id}"]
    [entry] = counted.entries(SESSION)
    assert entry.outcome is DecisionKind.DENY


async def test_an_approval_that_ends_before_its_row_was_queued_still_writes_both_in_order(
        counted: CountedLedger) -> None:
    request = bash_request("ls")
    pending = PendingApproval(request, counted)
    assert pending.hold_row_until_shown()
    pending.withdraw()
    await pending.record(Decision.withdrawn(), 1.0)
    assert counted.calls == [f"request {request.request_id}", f"outcome {request.request_id}"]
    assert not pending.hold_row_until_shown()  # nothing left to hold
    [entry] = counted.entries(SESSION)
    assert entry.outcome is DecisionKind.WITHDRAWN


async def test_a_request_whose_row_fails_is_denied_at_once(
        counted: CountedLedger, db: Database) -> None:
    db.writer.close()  # every write now fails
    pending = PendingApproval(bash_request("make"), counted)
    pending.queue_row()
    decision = await asyncio.wait_for(pending.answered(), 5)
    assert decision.kind is DecisionKind.ERROR and "could not record" in decision.message
    assert pending.state is ApprovalState.ANSWERED


# -- through the broker: a view holding the row during ADDED --------------------------

class DialogStandIn:
    """What the dialog queue does with each new request: it holds the row during ADDED
    (its dialog is on its way) and says when the dialog has painted."""

    def __init__(self, broker: ApprovalBroker, *, shows: bool = True) -> None:
        self.shows = shows
        self.broker = broker
        broker.subscribe(self)

    def __call__(self, event: BrokerEvent, request: ApprovalRequest,
                 _decision: Decision | None) -> None:
        approval = self.broker.approval(request.request_id)
        if event is BrokerEvent.ADDED and self.shows and approval is not None:
            approval.hold_row_until_shown()

    def painted(self, request: ApprovalRequest) -> None:
        approval = self.broker.approval(request.request_id)
        assert approval is not None
        approval.mark_shown()


async def test_through_the_broker_the_row_waits_for_the_dialogs_first_frame(
        broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    recorder, dialog = Recorder(broker), DialogStandIn(broker)
    task = asyncio.create_task(broker.request(bash_request("make")))
    request = await recorder.next_added()
    pending = broker.approval(request.request_id)
    assert pending is not None and pending.state is ApprovalState.ASKED
    assert not _row_written(db, ledger, request.request_id)  # the dialog is being made
    dialog.painted(request)
    await asyncio.wrap_future(pending.row_written)
    assert _row_written(db, ledger, request.request_id)
    broker.answer(request.request_id, Decision.allow_once({"command": "make"}))
    assert (await task).kind is DecisionKind.ALLOW_ONCE
    assert pending.sent is not None and pending.sent.kind is DecisionKind.ALLOW_ONCE
    [entry] = ledger.entries(SESSION)
    assert entry.outcome is DecisionKind.ALLOW_ONCE


async def test_a_dialog_that_never_paints_holds_the_row_back_only_briefly(
        broker: ApprovalBroker, db: Database, ledger: Ledger,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending_module, "ROW_HOLD_MAX_S", 0.05)
    recorder = Recorder(broker)
    DialogStandIn(broker)
    task = asyncio.create_task(broker.request(bash_request("make")))
    request = await recorder.next_added()
    pending = broker.approval(request.request_id)
    assert pending is not None
    await asyncio.wait_for(asyncio.wrap_future(pending.row_written), 5)
    assert _row_written(db, ledger, request.request_id)
    assert pending.state is ApprovalState.ASKED  # never shown, still waiting
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_with_no_dialog_of_its_own_the_row_is_queued_at_once(
        broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    DialogStandIn(broker, shows=False)  # another dialog is open
    task = asyncio.create_task(broker.request(bash_request("make")))
    request = await recorder.next_added()
    pending = broker.approval(request.request_id)
    assert pending is not None
    await asyncio.wait_for(asyncio.wrap_future(pending.row_written), 5)
    assert broker.pending() == [request]  # still waits for a person
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [entry] = ledger.entries(SESSION)
    assert entry.outcome is DecisionKind.WITHDRAWN


async def test_an_answer_or_withdrawal_before_the_first_paint_still_records_both_rows(
        broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    DialogStandIn(broker)  # never says "painted"
    answered = asyncio.create_task(broker.request(bash_request("make")))
    request = await recorder.next_added()
    broker.answer(request.request_id, Decision.deny("no"))
    assert (await asyncio.wait_for(answered, 5)).kind is DecisionKind.DENY
    withdrawn = asyncio.create_task(broker.request(bash_request("ls")))
    await recorder.next_added()
    withdrawn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(withdrawn, 5)
    outcomes = sorted(entry.outcome.value for entry in ledger.entries(SESSION)
                      if entry.outcome is not None)
    assert outcomes == sorted([DecisionKind.DENY.value, DecisionKind.WITHDRAWN.value])


async def test_with_a_held_row_a_request_that_cannot_be_recorded_is_still_denied(
        broker: ApprovalBroker, db: Database) -> None:
    recorder, dialog = Recorder(broker), DialogStandIn(broker)
    db.writer.close()  # every write now fails
    task = asyncio.create_task(broker.request(bash_request("make")))
    request = await recorder.next_added()
    dialog.painted(request)
    decision = await asyncio.wait_for(task, 5)
    assert decision.kind is DecisionKind.ERROR and "could not record" in decision.message
    assert not broker.pending()


async def test_a_request_nobody_answered_in_time_is_denied_and_recorded(
        broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    task = asyncio.create_task(broker.request(bash_request("make deploy")))
    request = await recorder.next_added()
    approval = broker.approval(request.request_id)
    assert approval is not None
    assert broker.time_out(request.request_id, "The terminal stopped waiting.")
    assert not broker.time_out(request.request_id)
    decision = await asyncio.wait_for(task, 5)
    assert decision.kind is DecisionKind.ERROR and decision.message == (
        "The terminal stopped waiting.")
    assert approval.state is ApprovalState.TIMED_OUT
    [entry] = ledger.entries(SESSION)
    assert entry.outcome is DecisionKind.ERROR
