"""Qoder sessions through the real control protocol: the CLI going away, the transcript,
hooks, controls and secrets (the scripted CLI of `test_qoder_protocol`)."""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref
from pathlib import Path
from typing import Any

import pytest
from helpers.qoder_harness import QoderHarness
from helpers.qoder_peer import WAIT, ScriptedQoderPeer
from helpers.qoder_results import (
    approvals,
    as_session_grant,
    session_lines,
    walk,
)
from qoder_agent_sdk import ProcessError

from qoder_desktop.agents.hub import UnknownSession
from qoder_desktop.agents.sink import SessionStartError
from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.consent_mint import mint_consent
from qoder_desktop.domain.models import (
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionMode,
    SessionState,
)
from qoder_desktop.domain.session_options import TranscriptKind

pytestmark = pytest.mark.asyncio

SECRET = "pat_SECRET123"


# -- the CLI going away -----------------------------------------------------------------


@pytest.mark.parametrize("error", [None, ProcessError("Command failed", exit_code=3)],
                         ids=["eof", "crash"])
async def test_the_cli_dying_withdraws_every_pending_request(
        harness: QoderHarness, error: Exception | None) -> None:
    session_id, peer = await harness.start()
    asked = [peer.ask("Bash", {"command": "make a"}), peer.ask("Bash", {"command": "make b"})]
    pending = [await harness.next_request(), await harness.next_request()]

    peer.die(error)
    finished = [await harness.next_finished(), await harness.next_finished()]
    assert {event for event, _, _ in finished} == {BrokerEvent.WITHDRAWN}
    assert {r.request_id for _, r, _ in finished} == {r.request_id for r in pending}
    await harness.wait_for(lambda: harness.hub.session(session_id).state is SessionState.FAILED,
                           "the session to fail")
    info = harness.hub.session(session_id)
    assert info.error is not None
    assert "The agent CLI exited" in info.error
    assert "2 pending request(s) were withdrawn" in info.error
    if error is not None:
        assert "exit code: 3" in info.error
    assert harness.broker.pending() == []
    assert {(r.outcome, r.decided_by) for r in approvals(harness, session_id)} == {
        (DecisionKind.WITHDRAWN, DecidedBy.WITHDRAWN)}
    last = harness.transcript(session_id)[-1]
    assert (last.kind, last.is_error) == (TranscriptKind.ERROR, True)
    assert not [e for e in harness.transcript(session_id) if e.kind is TranscriptKind.DENIAL]

    # The SDK's client is closed (the real transport deletes its auth payload file
    # there), and nobody tries to answer the dead CLI.
    await harness.wait_for(lambda: peer.closed, "the transport to be closed")
    await harness.wait_for(lambda: not _sdk_answering(), "the SDK's handlers to end")
    assert peer.writes_after_death == []
    for request in pending:
        assert not harness.broker.is_pending(request.request_id)
    for item in asked:
        assert peer.responses_for(item.request_id) == []


async def test_the_hub_lets_go_of_a_stopped_session_and_keeps_what_it_shows(
        harness: QoderHarness) -> None:
    """A week of sessions started and stopped must not keep a week of adapters (their
    closed SDK clients, hooks and options); the session list and transcript tail stay."""
    adapters = []
    for _ in range(3):
        session_id, peer = await harness.start()
        peer.system_init()
        await asyncio.wait_for(harness.hub.stop(session_id), WAIT)
        adapters.append((session_id, weakref.ref(harness.sessions.pop(session_id))))
        del harness.peers[session_id], peer  # the test's own references
    gc.collect()
    assert [session_id for session_id, adapter in adapters if adapter() is not None] == []
    for session_id, _ in adapters:
        assert harness.hub.session(session_id).state is SessionState.STOPPED
        assert harness.transcript(session_id)[0].text == "Go ahead."
        await harness.hub.stop(session_id)  # stopping it again changes nothing
        assert harness.hub.session(session_id).state is SessionState.STOPPED
        with pytest.raises(UnknownSession):
            await harness.hub.send(session_id, "Are you there?")


def _sdk_answering() -> bool:
    """True while a task of the SDK still handles one of the CLI's control requests (an
    answer to the dead CLI would be written from there)."""
    return any("_handle_control_request" in getattr(task.get_coro(), "__qualname__", "")
               for task in asyncio.all_tasks() if not task.done())


async def test_stop_withdraws_pending_requests_and_closes_the_transport(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "make"})
    request = await harness.next_request()
    assert _sdk_answering()  # (the SDK's handler waits for the person's answer)
    await asyncio.wait_for(harness.hub.stop(session_id), WAIT)
    event, finished, _ = await harness.next_finished()
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert harness.hub.session(session_id).state is SessionState.STOPPED
    assert peer.closed
    await harness.wait_for(lambda: not _sdk_answering(), "the SDK's handlers to end")
    assert peer.responses_for(asked.request_id) == []
    assert peer.writes_after_death == []


# -- the transcript -----------------------------------------------------------------------


async def test_messages_become_transcript_lines(harness: QoderHarness) -> None:
    session_id, peer = await harness.start("List the files.")
    peer.system_init()
    peer.assistant_text("Let me look around.")
    peer.tool_use("toolu_T1", "Bash", {"command": "ls -la"})
    peer.tool_result("toolu_T1", [{"type": "text", "text": "README.md\nsrc"}])
    peer.tool_use("toolu_T2", "Bash", {"command": "sudo reboot"})
    peer.permission_denied("Bash", "toolu_T2", "Permission to use Bash has been denied.",
                           decision_reason_type="rule", decision_reason="Bash(sudo:*)")
    peer.result("All done.")
    await harness.wait_for(
        lambda: any(e.kind is TranscriptKind.RESULT for e in harness.transcript(session_id)),
        "the result line")

    lines = session_lines(harness, session_id)
    assert [e.kind for e in lines] == [
        TranscriptKind.USER_PROMPT, TranscriptKind.SYSTEM, TranscriptKind.ASSISTANT_TEXT,
        TranscriptKind.TOOL_CALL, TranscriptKind.TOOL_RESULT, TranscriptKind.TOOL_CALL,
        TranscriptKind.DENIAL, TranscriptKind.RESULT]
    _, system, text, call, result, _, denial, done = lines
    assert "model auto" in system.text
    assert text.text == "Let me look around."
    assert (call.text, call.tool_name, call.tool_use_id) == ("ls -la", "Bash", "toolu_T1")
    assert (result.text, result.tool_use_id, result.is_error) == ("README.md\nsrc", "toolu_T1",
                                                                 False)
    assert (denial.tool_name, denial.tool_use_id, denial.is_error) == ("Bash", "toolu_T2", True)
    assert "Permission to use Bash has been denied." in denial.text
    assert done.text == "All done."
    assert harness.hub.session(session_id).state is SessionState.IDLE


# -- hooks --------------------------------------------------------------------------------


async def test_pre_tool_use_asks_again_only_for_a_revoked_grant(harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    grant = [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
              "behavior": "allow", "destination": "localSettings"}]
    asked = peer.ask("Bash", {"command": "npm test"}, suggestions=grant)
    request = await harness.next_request()
    harness.broker.answer(request.request_id, as_session_grant(request))
    await peer.answer(asked.request_id)
    [rule] = harness.hub.rules(session_id)
    outputs = []

    async def pre_tool_use(tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        output = await peer.answer(peer.hook("PreToolUse", tool_name, tool_input))
        outputs.append(output)
        return output

    assert await pre_tool_use("Bash", {"command": "npm test"}) == {}
    harness.hub.revoke_rule(rule.rule_id)
    asks_again = await pre_tool_use("Bash", {"command": "npm test"})
    specific = asks_again["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "ask"
    assert specific["permissionDecisionReason"].strip()
    assert await pre_tool_use("Bash", {"command": "ls"}) == {}
    assert await pre_tool_use("Read", {"file_path": str(harness.workspace / "a")}) == {}
    assert not [value for output in outputs for key, value in walk(output)
                if key == "permissionDecision" and value != "ask"]

    # The CLI asks again; our revoked rule no longer answers, a person does, and the
    # next allow tells the CLI to drop its copy of the grant (once).
    asked = peer.ask("Bash", {"command": "npm test"})
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.allow_once({"command": "npm test"}))
    answer = await peer.answer(asked.request_id)
    assert answer["updatedPermissions"] == [
        {"type": "removeRules", "destination": "session", "behavior": "allow",
         "rules": [{"toolName": "Bash", "ruleContent": "npm test"}]}]
    asked = peer.ask("Bash", {"command": "npm test"})
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.allow_once({"command": "npm test"}))
    assert "updatedPermissions" not in await peer.answer(asked.request_id)

    phases = [e.status for e in harness.ledger.entries(session_id)
              if e.entry_type == "tool_event"]
    assert phases == ["PreToolUse"] * 4


async def test_post_tool_use_hooks_are_recorded_with_their_phase(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    ran = peer.hook("PostToolUse", "Bash", {"command": "true"}, tool_response={"stdout": ""})
    failed = peer.hook("PostToolUseFailure", "Bash", {"command": "false"}, error="exit 1")
    assert await peer.answer(ran) == {}
    assert await peer.answer(failed) == {}
    events = [(e.status, e.original_input) for e in harness.ledger.entries(session_id)
              if e.entry_type == "tool_event"]
    assert sorted(events, key=lambda e: e[0]) == [
        ("PostToolUse", {"command": "true"}), ("PostToolUseFailure", {"command": "false"})]


# -- controls -----------------------------------------------------------------------------


async def test_interrupt_and_mode_switch_go_through_the_control_protocol(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    await asyncio.wait_for(harness.hub.interrupt(session_id), WAIT)
    assert peer.sdk_requests[-1] == {"subtype": "interrupt"}
    await asyncio.wait_for(harness.hub.set_mode(session_id, PermissionMode.PLAN), WAIT)
    assert peer.sdk_requests[-1] == {"subtype": "set_permission_mode", "mode": "plan"}
    written = len(peer.lines)
    with pytest.raises(PermissionError):
        await harness.hub.set_mode(session_id, PermissionMode.BYPASS)
    assert len(peer.lines) == written
    assert harness.hub.session(session_id).permission_mode is PermissionMode.PLAN


@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS])
async def test_an_approved_plan_switches_the_session_to_its_chosen_mode_once(
        harness: QoderHarness, mode: PermissionMode) -> None:
    session_id, peer = await harness.start(permission_mode=PermissionMode.PLAN)
    plan = {"plan": "1. Read the code\n2. Fix the bug"}
    asked = peer.ask("ExitPlanMode", plan)
    request = await harness.next_request()
    harness.hub_events.clear()
    # acceptEdits goes with the consent the plan dialog's confirmation box mints
    consent = mint_consent(session_id, mode) if mode.needs_confirmation else None
    harness.broker.answer(request.request_id, Decision.allow_once(
        dict(request.tool_input), next_mode=mode, consent=consent))
    assert (await peer.answer(asked.request_id))["behavior"] == "allow"
    await harness.wait_for(lambda: peer.sdk_requests[-1] == {
        "subtype": "set_permission_mode", "mode": mode.value}, "the mode switch")
    await harness.wait_for(
        lambda: harness.hub.session(session_id).permission_mode is mode,
        "the new mode in the hub")
    switched = [event for event in harness.hub_events if event.session is not None
                and event.session.permission_mode is mode]
    assert len(switched) == 1  # stored and published once
    assert not [event for event in harness.hub_events if event.text]  # no failure notice


async def test_a_refused_handshake_fails_the_session(harness: QoderHarness) -> None:
    peer = ScriptedQoderPeer(initialize_error="not logged in")
    with pytest.raises(SessionStartError, match="not logged in"):
        await harness.start(peer=peer)
    [info] = harness.hub.sessions()
    assert info.state is SessionState.FAILED
    assert info.error is not None and "not logged in" in info.error


# -- secrets ------------------------------------------------------------------------------


async def test_the_access_token_never_shows_in_logs_errors_or_reprs(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    harness = QoderHarness.open(tmp_path, access_token=SECRET)
    seen: list[str] = []
    try:
        session_id, peer = await harness.start("Deploy it.")
        session = harness.sessions[session_id]
        assert session.access_token == SECRET
        assert session._client.options.auth.access_token == SECRET  # really in use

        asked = peer.ask("Bash", {"command": "make"}, suggestions=["garbage"])
        request = await harness.next_request()
        harness.broker.answer(request.request_id, Decision.allow_once({"command": "make"}))
        await peer.answer(asked.request_id)
        asked = peer.ask("Bash", {"command": "make deploy"})
        request = await harness.next_request()
        harness.broker.answer(request.request_id, Decision.deny("no", interrupt=True))
        await peer.answer(asked.request_id)
        asked = peer.ask("Bash", ["not", "an", "object"])
        await peer.answer(asked.request_id)
        asked = peer.ask("Bash", {"command": "sleep 9"})
        await harness.next_request()
        peer.cancel(asked.request_id)
        await harness.next_finished()
        await peer.answer(peer.hook("PreToolUse", "Bash", {"command": "make"}))
        peer.ask("Bash", {"command": "make again"})
        await harness.next_request()
        peer.die(ProcessError("Command failed", exit_code=1, stderr="boom"))
        await harness.wait_for(
            lambda: harness.hub.session(session_id).state is SessionState.FAILED,
            "the session to fail")
        seen += [repr(session), str(session), repr(session.info), repr(harness.hub.sessions()),
                 *peer.lines, *peer.writes_after_death, session.stderr_tail,
                 *(repr(e) for e in harness.transcript(session_id)),
                 *(e.model_dump_json() for e in harness.ledger.entries())]

        refused = ScriptedQoderPeer(initialize_error="token rejected")
        with pytest.raises(SessionStartError) as caught:
            await harness.start(peer=refused)
        seen += [str(caught.value), repr(caught.value), repr(harness.hub.sessions())]
    finally:
        await harness.close()
    seen.append(caplog.text)
    assert caplog.text  # the paths above did log something
    for text in seen:
        assert SECRET not in text


async def test_the_session_shows_the_mode_the_cli_reports(harness: QoderHarness) -> None:
    session_id, peer = await harness.start("Plan it first.")
    assert harness.hub.session(session_id).permission_mode is PermissionMode.DEFAULT
    peer.system_init(permission_mode="plan")
    await harness.wait_for(
        lambda: harness.hub.session(session_id).permission_mode is PermissionMode.PLAN,
        "the reported mode")
    peer.system_init(permission_mode="something-new")  # unknown modes change nothing
    peer.result("ok")
    await harness.wait_for(
        lambda: any(e.kind is TranscriptKind.RESULT for e in harness.transcript(session_id)),
        "the result line")
    assert harness.hub.session(session_id).permission_mode is PermissionMode.PLAN


async def test_a_denial_reads_as_one_line_when_the_cli_reports_it_too(
        harness: QoderHarness) -> None:
    """The Qoder CLI may report a call we denied as `permission_denied`: one line, ours."""
    session_id, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "rm -rf build"}, tool_use_id="toolu_D1")
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.deny("not today"))
    await peer.answer(asked.request_id)
    peer.permission_denied("Bash", "toolu_D1", "not today")
    peer.tool_result("toolu_D1", "not today", is_error=True)
    peer.result("Stopped there.")
    await harness.wait_for(
        lambda: any(e.kind is TranscriptKind.RESULT for e in harness.transcript(session_id)),
        "the result line")
    lines = harness.transcript(session_id)
    assert [e.text for e in lines if "not today" in e.text] == ["not today"]
