"""A terminal agent's first request while the database is read-only: not dropped in
silence."""

from __future__ import annotations

import json

import pytest
from helpers.disk_faults import make_read_only
from helpers.hook_command import start_hook
from helpers.terminal_rig import TerminalRig
from test_hook_client import EVENT, _finish

from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.models import Decision, DecisionKind
from qoder_desktop.store.database import Database


@pytest.mark.asyncio
async def test_a_new_terminal_sessions_request_on_a_read_only_database_is_denied_and_told(
        rig: TerminalRig, db: Database) -> None:
    told: list[BrokerEvent] = []
    rig.broker.subscribe(lambda event, _request, _decision: told.append(event))
    make_read_only(db)
    event = {**EVENT, "session_id": "new-while-read-only"}
    process = await start_hook(event)
    request = await rig.next_request()  # it reaches the desk (was: dropped with a log line)
    code, out = await _finish(process)
    assert code == 0
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny"  # fail closed
    assert "read-only" in decision["message"]
    assert BrokerEvent.UNRECORDED in told  # the person is told (status bar, dialogs)
    [kept] = rig.broker.unwritten()
    assert kept.request.request_id == request.request_id
    assert [s.session_id for s in rig.hub.sessions()] == [request.session_id]

    make_read_only(db, False)  # writable: its next request writes its row and the kept one
    process = await start_hook(event)
    second = await rig.next_request()
    rig.broker.answer(second.request_id, Decision.allow_once(dict(second.tool_input)))
    code, out = await _finish(process)
    assert json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "allow"
    while rig.broker.unwritten():
        await rig.next_finished()  # (lets the loop run the kept write)
    rows = db.fetchall("SELECT session_id FROM sessions WHERE session_id = ?",
                       (request.session_id,))
    assert len(rows) == 1
    first = next(e for e in rig.ledger.entries(request.session_id)
                 if e.entry_id == request.request_id)
    assert first.outcome is DecisionKind.ERROR
