"""Two sub-agents ask at once; "allow for this session" on one never answers the other.

The real Claude Code CLI starts two sub-agents in one model turn (the scripted model's
`parallel_subagents` scenario): one asks for `touch a`, the other for
`touch a link_out/../escaped.txt`, where `link_out` is a symlink to a folder outside the
workspace, so that path lands outside it. Both requests wait for a person. The person
allows `touch a` for the session in the approval dialog (the CLI's suggested rule, which
our matcher reads as covering the other command too). The other request must go on
waiting for the person: nothing outside the workspace is touched until someone answers
it, and when the person denies it the session ends cleanly with the deny on record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from helpers.claude_harness import WAIT, Harness

from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.approval.rule_decisions import evaluate
from qoder_desktop.domain.models import (
    ApprovalRequest,
    DecidedBy,
    Decision,
    DecisionKind,
    RuleBehavior,
    SessionState,
)
from qoder_desktop.domain.session_options import TranscriptKind
from qoder_desktop.ui.dialogs import ApprovalDialog

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

TOUCH_A = "touch a"
ESCAPE = "touch a link_out/../escaped.txt"


async def _until(ready: Callable[[], object], what: str) -> None:
    """Wait (on the loop, checking each 20 ms) until `ready()` is true; fail after WAIT s."""
    async def poll() -> None:
        while not ready():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(poll(), WAIT)
    except TimeoutError:
        pytest.fail(f"timed out waiting until {what}")


def _answer_in_dialog(qtbot, request: ApprovalRequest,  # type: ignore[no-untyped-def]
                      act: Callable[[ApprovalDialog], None]) -> Decision:
    """Show the approval dialog for `request`, let `act` press its button, return the
    decision the dialog emitted."""
    dialog = ApprovalDialog(request)
    qtbot.addWidget(dialog)
    decisions: list[Decision] = []
    dialog.decided.connect(decisions.append)
    dialog.show()
    act(dialog)
    [decision] = decisions
    return decision


async def test_allow_for_session_on_one_sub_agent_leaves_the_others_request_waiting(
        harness: Harness, qtbot, qapp) -> None:  # type: ignore[no-untyped-def]
    qapp.setQuitOnLastWindowClosed(False)  # as the app does: a dialog closing ends nothing
    elsewhere = harness.workspace.parent / "elsewhere"
    (elsewhere / "linked").mkdir(parents=True)
    (harness.workspace / "link_out").symlink_to(elsewhere / "linked")
    escaped = elsewhere / "escaped.txt"

    session_id = await harness.start("parallel_subagents")
    asked = {}
    for _ in range(2):  # the sub-agents run at the same time: either may ask first
        request = await harness.next_request()
        asked[request.tool_input["command"]] = request
    assert set(asked) == {TOUCH_A, ESCAPE}
    touch_a, escape = asked[TOUCH_A], asked[ESCAPE]
    assert touch_a.agent_id and escape.agent_id and touch_a.agent_id != escape.agent_id
    assert harness.broker.is_pending(touch_a.request_id)
    assert harness.broker.is_pending(escape.request_id)

    # The person presses "allow for this session" (Ctrl+Shift+Return) on `touch a`: the
    # dialog turns the CLI's suggestion into a session grant.
    grant = _answer_in_dialog(qtbot, touch_a, lambda dialog: dialog.allow_session())
    assert grant.kind is DecisionKind.ALLOW_SESSION
    suggested = [str(rule) for update in touch_a.suggestions if update.type == "addRules"
                 for rule in update.rules or ()]
    assert [str(rule) for update in grant.updates for rule in update.rules or ()] == suggested
    assert {update.destination for update in grant.updates} == {"session"}
    harness.broker.answer(touch_a.request_id, grant)
    finished = [await harness.next_finished()]
    while finished[-1][1].request_id != touch_a.request_id:
        finished.append(await harness.next_finished())
    event, _, decision = finished[-1]
    assert event is BrokerEvent.ANSWERED
    assert decision is not None and decision.decided_by is DecidedBy.USER
    rules = harness.hub.rules(session_id)
    granted = [str(rule.rule) for rule in rules]
    # The test means something only while the grant covers the other call by our
    # matcher's reading (as the CLI's `Bash(touch a *)` does): that is the case where a
    # grant could be taken as an answer for a request that was already waiting.
    verdict = evaluate(rules, escape)
    assert verdict is not None and verdict.behavior is RuleBehavior.ALLOW, (
        f"the grant {granted} no longer covers {ESCAPE!r} by our matcher")

    # `touch a` runs and its sub-agent goes on: the grant has reached the CLI.
    await _until(lambda: harness.results_for(touch_a.tool_use_id), "`touch a` ran")
    assert (harness.workspace / "a").exists()

    # Nobody answered the other request, so it still waits and its command did not run.
    answered_without_person = [
        (d.decided_by.value, d.rule) for _, r, d in finished + _drain(harness)
        if r.request_id == escape.request_id and d is not None]
    if answered_without_person:  # let its command finish, so the failure shows its effect
        await _until(lambda: harness.results_for(escape.tool_use_id), f"{ESCAPE!r} ran")
    assert not escaped.exists(), (
        f"{escaped} was created outside the workspace by a request nobody answered "
        f"(answered by {answered_without_person} after the grant {granted})")
    assert harness.broker.is_pending(escape.request_id), (
        f"the waiting request {ESCAPE!r} was answered by {answered_without_person}, "
        f"not by a person")
    assert [r.request_id for r in harness.broker.pending()] == [escape.request_id]

    # The person denies it.
    def deny_with_reason(dialog: ApprovalDialog) -> None:
        dialog.ui.denyReasonEdit.setText("That path leaves the workspace.")
        dialog.deny()

    refusal = _answer_in_dialog(qtbot, escape, deny_with_reason)
    harness.broker.answer(escape.request_id, refusal)
    await harness.wait_idle()

    assert not escaped.exists()
    assert harness.broker.pending() == []
    assert harness.hub.session(session_id).state is SessionState.IDLE
    lines = harness.hub.transcript(session_id)
    assert [line.kind for line in lines if line.kind in (
        TranscriptKind.RESULT, TranscriptKind.ERROR)] == [TranscriptKind.RESULT]
    assert [line.text for line in lines if line.kind is TranscriptKind.ASSISTANT_TEXT
            ][-1] == "Both helpers have reported back."
    assert any("That path leaves the workspace." in text
               for text in harness.results_for(escape.tool_use_id))
    approvals = {e.tool_use_id: e for e in harness.ledger.entries(session_id)
                 if e.entry_type == "approval"}
    assert (approvals[touch_a.tool_use_id].outcome,
            approvals[touch_a.tool_use_id].decided_by) == (DecisionKind.ALLOW_SESSION,
                                                           DecidedBy.USER)
    assert (approvals[escape.tool_use_id].outcome,
            approvals[escape.tool_use_id].decided_by) == (DecisionKind.DENY, DecidedBy.USER)
    await harness.hub.stop(session_id)
    assert harness.hub.session(session_id).state is SessionState.STOPPED


def _drain(harness: Harness) -> list[tuple[BrokerEvent, ApprovalRequest, Decision | None]]:
    """The finished-request events that arrived so far (without waiting)."""
    events = []
    while not harness.finished.empty():
        events.append(harness.finished.get_nowait())
    return events
