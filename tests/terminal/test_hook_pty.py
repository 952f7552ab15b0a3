"""The interactive Claude Code CLI in a pseudo-terminal: Qoder Desktop and the terminal
prompt side by side; whichever answers first wins, and the other side learns of it."""

from __future__ import annotations

import asyncio

import pytest
from helpers.terminal_rig import BUNDLED_CLI, TIMEOUT, TerminalRig

from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.models import (
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.domain.session_options import TranscriptKind

DONE = 'Created hello.txt with the text "hello".'
"""The bash scenario's closing text."""

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]


@pytest.mark.asyncio
async def test_allow_in_qoder_desktop_unblocks_the_terminal(rig: TerminalRig) -> None:
    cli = rig.start_interactive()
    try:
        request = await rig.next_request()
        await cli.wait_for("Do you want to proceed?")  # the terminal asks too
        rig.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        await cli.wait_for("Allowed by PermissionRequest hook")
        await cli.wait_for(DONE)
        # The session view shows what the agent did, from its transcript file.
        kinds = await _transcript_until(rig, request.session_id, DONE)
    finally:
        cli.close()
    assert (rig.workspace / "hello.txt").read_text() == "hello\n"
    assert kinds[:3] == [(TranscriptKind.USER_PROMPT, "Go ahead."),
                         (TranscriptKind.ASSISTANT_TEXT, "I'll create the file with a shell "
                                                         "command."),
                         (TranscriptKind.TOOL_CALL, "echo hello > hello.txt")]
    assert (TranscriptKind.ASSISTANT_TEXT, DONE) in kinds


async def _transcript_until(rig: TerminalRig, session_id: str, text: str
                            ) -> list[tuple[TranscriptKind, str]]:
    """The session's transcript once a line with `text` arrived (the file is polled)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            lines = [(line.kind, line.text) for line in rig.hub.transcript(session_id)]
            if any(found == text for _kind, found in lines):
                return lines
            await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_a_question_is_answered_from_qoder_desktop(rig: TerminalRig) -> None:
    cli = rig.start_interactive("question")
    chosen = []
    try:
        for _ in range(2):
            request = await rig.next_request()
            assert request.tool_name == "AskUserQuestion"
            [question] = request.tool_input["questions"]
            label = question["options"][-1]["label"]
            rig.broker.answer(request.request_id, Decision.allow_once(
                {**request.tool_input, "answers": {question["question"]: label}}))
            chosen.append(label)
        await cli.wait_for("Thanks, I'll go with your choices.")
    finally:
        cli.close()
    results = rig.results()
    assert len(results) == 2 and not any(r.is_error for r in results)
    for record, label in zip(results, chosen, strict=True):
        assert label in record.content


@pytest.mark.asyncio
async def test_yes_in_the_terminal_closes_the_desktop_dialog(rig: TerminalRig) -> None:
    cli = rig.start_interactive()
    try:
        request = await rig.next_request()
        await cli.wait_for("Do you want to proceed?")
        cli.type("1")  # "1. Yes" in the terminal
        event, finished, decision = await rig.next_finished()
        await cli.wait_for(DONE)
    finally:
        cli.close()
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert decision is not None and decision.message == "Answered in the terminal."
    assert (rig.workspace / "hello.txt").read_text() == "hello\n"


@pytest.mark.asyncio
async def test_no_in_the_terminal_withdraws_the_desktop_request(rig: TerminalRig) -> None:
    cli = rig.start_interactive()
    try:
        request = await rig.next_request()
        await cli.wait_for("Do you want to proceed?")
        cli.type("\x1b")  # Esc: "No" in the terminal; the CLI stops the hook (SIGTERM)
        event, finished, decision = await rig.next_finished()
    finally:
        cli.close()
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, request.request_id)
    assert decision is not None and decision.kind is DecisionKind.WITHDRAWN
    assert not rig.broker.is_pending(request.request_id)
    assert not (rig.workspace / "hello.txt").exists()


@pytest.mark.asyncio
async def test_a_revoked_grant_reaches_the_interactive_cli_with_the_next_allow(
        rig: TerminalRig) -> None:
    """As in -p mode: the allow answered from Qoder Desktop carries the removal, and the
    next call under the revoked rule asks again (in the app and in the terminal)."""
    cli = rig.start_interactive("revoke_command")
    try:
        first = await rig.next_request()
        grant = PermissionSuggestion(
            type="addRules", rules=(RuleValue(tool_name="Bash",
                                              rule_content="touch marker.txt"),),
            behavior=RuleBehavior.ALLOW, destination="session")
        rig.broker.answer(first.request_id,
                          Decision.allow_session(dict(first.tool_input), (grant,)))
        second = await rig.next_request()
        assert second.tool_input["command"] == "touch other.txt"
        [rule] = rig.hub.rules(second.session_id)
        rig.hub.revoke_rule(rule.rule_id)
        rig.broker.answer(second.request_id, Decision.allow_once(dict(second.tool_input)))
        third = await rig.next_request()
        assert third.tool_input["command"] == "touch marker.txt"
        [rule] = rig.hub.rules(third.session_id)
        assert rule.removal_delivered_at is not None
        rig.broker.answer(third.request_id, Decision.deny("That rule was revoked."))
        await cli.wait_for("Denied by PermissionRequest hook")
    finally:
        cli.close()
    assert (rig.workspace / "other.txt").exists()
