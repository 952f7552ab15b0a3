"""A week on the desk must not list every session that ever ran: the hub lists every
running session and the ended ones that ended last; an older ended session is
forgotten (its info and transcript tail), never while a request of it waits for a
person, and its requests and decisions stay in the ledger that History reads."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.loop import settle

from qoder_desktop.agents.ended_sessions import ENDED_SESSIONS_KEPT, EndedSessions
from qoder_desktop.agents.hub import HubEvent, HubEventKind, SessionHub, UnknownSession
from qoder_desktop.agents.transcript_store import Transcripts
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.history import HistoryFilter
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, SessionState
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.store.database import Database
from qoder_desktop.store.history import HistoryQueries, connect_read_only
from qoder_desktop.store.ledger import Ledger


def _no_adapters(*_args: Any) -> Any:
    raise AssertionError("these tests start no in-app session")


def _hub(db: Database) -> tuple[SessionHub, ApprovalBroker, list[HubEvent]]:
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, _no_adapters)
    events: list[HubEvent] = []
    hub.subscribe(events.append)
    return hub, broker, events


def _ended_terminal_session(hub: SessionHub, number: int) -> str:
    """A terminal session that said one line and whose CLI exited."""
    info = hub.terminal_session(f"cli-{number}", "Claude Code", f"/work/project-{number}")
    hub.add_transcript_line(TranscriptEvent(session_id=info.session_id,
                                            kind=TranscriptKind.USER_PROMPT,
                                            text=f"prompt {number}"))
    hub.state_changed(info.session_id, SessionState.STOPPED, None)
    return info.session_id


def _forgotten(events: list[HubEvent]) -> list[str]:
    return [event.session_id for event in events if event.kind is HubEventKind.FORGOTTEN]


def test_the_hub_lists_every_running_session_and_only_the_ended_ones_that_ended_last(
        db: Database) -> None:
    hub, _broker, events = _hub(db)
    running = [hub.external_session(f"agent {n}").session_id for n in range(3)]  # oldest
    ended = [_ended_terminal_session(hub, n) for n in range(ENDED_SESSIONS_KEPT + 10)]

    assert {info.session_id for info in hub.sessions()} == {*running, *ended[10:]}
    assert _forgotten(events) == ended[:10]  # the ones that ended longest ago
    assert hub.forgotten() == 10
    assert hub.transcript(ended[0]) == []
    assert hub.transcript(ended[10])[-1].text == "prompt 10"
    assert hub.transcript_lines_kept() == ENDED_SESSIONS_KEPT
    with pytest.raises(UnknownSession):
        hub.session(ended[0])
    hub.state_changed(ended[0], SessionState.STOPPED, None)  # a late report changes nothing
    assert len(hub.sessions()) == 3 + ENDED_SESSIONS_KEPT


def test_a_session_that_runs_again_is_not_counted_among_the_ended(db: Database) -> None:
    hub, _broker, events = _hub(db)
    first = _ended_terminal_session(hub, 0)
    hub.terminal_session("cli-0", "Claude Code", "/work/project-0")  # resumed in a new CLI
    for number in range(1, ENDED_SESSIONS_KEPT + 5):
        _ended_terminal_session(hub, number)
    assert hub.session(first).state is SessionState.RUNNING
    assert first not in _forgotten(events)


@pytest.mark.asyncio
async def test_an_ended_session_is_not_forgotten_while_its_request_waits(
        db: Database) -> None:
    hub, broker, events = _hub(db)
    waiting = hub.external_session("slow agent").session_id
    request = ApprovalRequest(session_id=waiting, session_name="slow agent",
                              backend=Backend.EXTERNAL, tool_name="Bash",
                              tool_input={"command": "make deploy"})
    asked = asyncio.ensure_future(broker.request(request))
    await settle(lambda: broker.is_pending(request.request_id))
    hub.state_changed(waiting, SessionState.STOPPED, None)  # ended first, request waiting
    ended = [_ended_terminal_session(hub, n) for n in range(ENDED_SESSIONS_KEPT + 1)]

    assert hub.session(waiting).state is SessionState.STOPPED  # still listed
    assert _forgotten(events) == ended[:2]  # the next ones that ended longest ago instead
    assert len(hub.sessions()) == ENDED_SESSIONS_KEPT

    broker.answer(request.request_id, Decision.deny("Not today."))
    await asyncio.wait_for(asked, 5)
    _ended_terminal_session(hub, ENDED_SESSIONS_KEPT + 1)
    assert _forgotten(events) == [*ended[:2], waiting]  # now its turn has come
    assert len(hub.sessions()) == ENDED_SESSIONS_KEPT
    db.writer.flush()
    history = HistoryQueries(connect_read_only(db.path))
    [row] = history.page(HistoryFilter(session_id=waiting))
    assert row.request_id == request.request_id  # its decision stays in History
    assert (waiting, "slow agent") in history.sessions()


@pytest.mark.asyncio
async def test_more_waiting_ended_sessions_than_are_kept_go_once_answered(
        db: Database) -> None:
    hub, broker, events = _hub(db)
    asked = []
    for number in range(ENDED_SESSIONS_KEPT + 2):
        session_id = hub.external_session(f"agent {number}").session_id
        request = ApprovalRequest(session_id=session_id, backend=Backend.EXTERNAL,
                                  tool_name="Bash", tool_input={"command": f"job {number}"})
        asked.append((request, asyncio.ensure_future(broker.request(request))))
        await settle(lambda request=request: broker.is_pending(request.request_id))
        hub.state_changed(session_id, SessionState.STOPPED, None)
    assert _forgotten(events) == []  # every one of them waits for the person

    first, task = asked[0]
    broker.answer(first.request_id, Decision.deny("No."))
    await asyncio.wait_for(task, 5)
    assert _forgotten(events) == [first.session_id]
    for request, task in asked[1:]:
        broker.withdraw(request.request_id, "the agent went away")
        await asyncio.wait_for(task, 5)
    assert len(_forgotten(events)) == 2 and len(hub.sessions()) == ENDED_SESSIONS_KEPT


def test_the_sessions_that_ended_longest_ago_are_forgotten_first() -> None:
    ended = EndedSessions(limit=3)
    for session_id in ("a", "b", "c", "d"):
        ended.ended(session_id)
    ended.ended("a")  # ended again (resumed and exited): now the one that ended last
    assert ended.to_forget(waiting={"b"}) == ["c"]
    assert not ended.over_limit() and ended.forgotten == 1
    ended.ended("e")
    ended.resumed("d")  # runs again: no longer among the ended
    assert ended.to_forget(waiting=set()) == []
    ended.ended("f")
    assert ended.to_forget(waiting=set()) == ["b"] and ended.forgotten == 2


def test_a_forgotten_transcript_gives_its_lines_back_to_the_ended_sessions_budget() -> None:
    kept = Transcripts(limit=10, ended_tail=3, ended_lines=5)
    for session_id in ("a", "b"):
        for number in range(2):
            kept.add(TranscriptEvent(session_id=session_id, kind=TranscriptKind.USER_PROMPT,
                                     text=f"{session_id}{number}"))
        kept.ended(session_id)
    kept.forget("a")
    assert kept.lines("a") == [] and kept.kept() == 2
    kept.add(TranscriptEvent(session_id="c", kind=TranscriptKind.USER_PROMPT, text="c0"))
    kept.ended("c")
    kept.add(TranscriptEvent(session_id="c", kind=TranscriptKind.USER_PROMPT, text="c1"))
    kept.add(TranscriptEvent(session_id="c", kind=TranscriptKind.USER_PROMPT, text="c2"))
    assert [line.text for line in kept.lines("b")] == ["b0", "b1"]  # 5 ended lines: within
