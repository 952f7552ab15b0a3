"""The real Claude Code CLI: a plan sent back ("Keep planning") is told as what it is."""

from __future__ import annotations

import pytest
from helpers.claude_harness import Harness

from qoder_desktop.domain.models import PLAN_TOOL, Decision, DecisionKind, PermissionMode
from qoder_desktop.domain.session_options import TranscriptKind

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]


async def test_keep_planning_is_recorded_on_the_plan_call_not_as_a_bare_denial(
        harness: Harness) -> None:
    session_id = await harness.start("plan")
    request = await harness.next_request()
    assert request.tool_name == PLAN_TOOL
    harness.broker.answer(request.request_id, Decision.keep_planning("Keep planning."))
    await harness.wait_idle()
    [denial] = [e for e in harness.hub.transcript(session_id)
                if e.kind is TranscriptKind.DENIAL]
    assert denial.tool_name == PLAN_TOOL and denial.text == "Keep planning."
    [approval] = [e for e in harness.ledger.entries(session_id) if e.entry_type == "approval"]
    assert approval.outcome == DecisionKind.KEEP_PLANNING and approval.tool_name == PLAN_TOOL
    assert approval.status == "keep_planning" and approval.who == "you"
    assert not denial.is_error  # a plan sent back is not an error
    # The agent stays in plan mode, and the session shows it (EnterPlanMode switched it).
    assert harness.hub.session(session_id).permission_mode is PermissionMode.PLAN
