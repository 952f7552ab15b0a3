"""A request's ledger row waits for its dialog's first frame (a presenter), never
longer than `ROW_HOLD_MAX_S`, always before the decision's row, and a row that fails
still denies the request."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from helpers.broker_events import Recorder
from helpers.loop import settle

from qoder_desktop.approval import row_write
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

pytestmark = pytest.mark.asyncio

SESSION = "session-1"


def _bash(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id=SESSION, session_name="demo", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp/ws")


class Presenter:
    """Holds each new request's row until the test says its dialog has painted."""

    def __init__(self, broker: ApprovalBroker, *, holds: bool = True) -> None:
        self.holds = holds
        self.painted: dict[str, Callable[[], None]] = {}
        broker.set_presenter(self)

    def __call__(self, request: ApprovalRequest, then: Callable[[], None]) -> bool:
        if self.holds:
            self.painted[request.request_id] = then
        return self.holds


def _row_written(db: Database, ledger: Ledger, request_id: str) -> bool:
    db.writer.flush()
    return any(entry.entry_id == request_id for entry in ledger.entries(SESSION))


async def test_the_request_row_is_written_once_its_dialog_has_painted(
        broker: ApprovalBroker, db: Database, ledger: Ledger,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_write, "ROW_HOLD_MAX_S", 60.0)  # only the paint releases it
    recorder, presenter = Recorder(broker), Presenter(broker)
    task = asyncio.create_task(broker.request(_bash("make")))
    request = await recorder.next_added()
    # The broker decides at once, when it adds the request, whether the row is held (a
    # declining presenter's row is written by then, see below); the flush in
    # `_row_written` proves the writer holds nothing else for it.
    assert not _row_written(db, ledger, request.request_id)  # the dialog is being made
    presenter.painted[request.request_id]()
    assert _row_written(db, ledger, request.request_id)
    broker.answer(request.request_id, Decision.allow_once({"command": "make"}))
    assert (await task).kind is DecisionKind.ALLOW_ONCE
    [entry] = ledger.entries(SESSION)
    assert entry.outcome is DecisionKind.ALLOW_ONCE


async def test_a_dialog_that_never_paints_holds_the_row_back_only_briefly(
        broker: ApprovalBroker, db: Database, ledger: Ledger,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_write, "ROW_HOLD_MAX_S", 0.05)
    recorder = Recorder(broker)
    Presenter(broker)
    task = asyncio.create_task(broker.request(_bash("make")))
    request = await recorder.next_added()
    await settle(lambda: _row_written(db, ledger, request.request_id))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_answer_or_withdrawal_before_the_first_paint_still_records_both_rows(
        broker: ApprovalBroker, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    Presenter(broker)  # never says "painted"
    answered = asyncio.create_task(broker.request(_bash("make")))
    request = await recorder.next_added()
    broker.answer(request.request_id, Decision.deny("no"))
    assert (await asyncio.wait_for(answered, 5)).kind is DecisionKind.DENY
    withdrawn = asyncio.create_task(broker.request(_bash("ls")))
    await recorder.next_added()
    withdrawn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(withdrawn, 5)
    outcomes = sorted(entry.outcome.value for entry in ledger.entries(SESSION)
                      if entry.outcome is not None)
    assert outcomes == sorted([DecisionKind.DENY.value, DecisionKind.WITHDRAWN.value])


async def test_with_a_presenter_a_request_that_cannot_be_recorded_is_still_denied(
        broker: ApprovalBroker, db: Database) -> None:
    recorder, presenter = Recorder(broker), Presenter(broker)
    db.writer.close()  # every write now fails
    task = asyncio.create_task(broker.request(_bash("make")))
    request = await recorder.next_added()
    presenter.painted[request.request_id]()
    decision = await asyncio.wait_for(task, 5)
    assert decision.kind is DecisionKind.ERROR and "could not record" in decision.message
    assert not broker.pending()


async def test_a_presenter_that_fails_or_declines_lets_the_row_be_written_at_once(
        broker: ApprovalBroker, db: Database, ledger: Ledger) -> None:
    recorder = Recorder(broker)
    Presenter(broker, holds=False)
    first = asyncio.create_task(broker.request(_bash("make")))
    request = await recorder.next_added()
    assert _row_written(db, ledger, request.request_id)  # queued when it was added

    def failing(_request: ApprovalRequest, _then: Callable[[], None]) -> bool:
        raise RuntimeError("the dialog queue is gone")

    broker.set_presenter(failing)
    second = asyncio.create_task(broker.request(_bash("ls")))
    other = await recorder.next_added()
    assert _row_written(db, ledger, other.request_id)
    assert broker.pending() == [request, other]  # both still wait for a person
    first.cancel()
    second.cancel()
    for task in (first, second):
        with pytest.raises(asyncio.CancelledError):
            await task
