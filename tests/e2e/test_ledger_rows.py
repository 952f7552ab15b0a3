"""What the ledger records for calls the real CLI ran under a session grant."""

from __future__ import annotations

import pytest
from helpers.claude_harness import Harness, session_grant

from qoder_desktop.domain.models import (
    DecidedBy,
    Decision,
    DecisionKind,
)

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]


async def test_a_call_the_cli_allowed_under_a_session_grant_gets_an_approval_row(
        harness: Harness) -> None:
    session_id = await harness.start("repeat_command")
    first = await harness.next_request()
    harness.broker.answer(first.request_id, Decision.allow_session(
        dict(first.tool_input), session_grant("Bash(touch marker.txt)")))
    await harness.wait_idle()
    assert harness.requests.empty()  # the second call never reached us
    entries = harness.ledger.entries(session_id)
    approvals = [e for e in entries if e.entry_type == "approval"]
    assert [(a.outcome, a.decided_by) for a in approvals] == [
        (DecisionKind.ALLOW_SESSION, DecidedBy.USER),
        (DecisionKind.ALLOW_ONCE, DecidedBy.CLI)]
    by_rule = approvals[1]
    assert by_rule.matched_rule == "Bash(touch marker.txt)"  # our reading of its grant
    assert by_rule.message == ("Run by the agent's CLI under its session grant; we read it "
                               "as Bash(touch marker.txt).")
    assert by_rule.session_name == "repeat_command"
    assert by_rule.original_input == {"command": "touch marker.txt",
                                      "description": by_rule.original_input["description"]}
    assert by_rule.tool_use_id and by_rule.tool_use_id != first.tool_use_id
    events = [e for e in entries if e.entry_type == "tool_event"]
    assert len(events) == 4 and {e.session_name for e in events} == {"repeat_command"}

