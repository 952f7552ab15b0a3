"""The real Claude Code CLI, driven by the scripted model, answered through the broker."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest
from helpers.claude_harness import Harness, session_grant

from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.approval.questions import (
    QuestionAnswer,
    answer_labels,
    encode_answers,
    parse_questions,
)
from qoder_desktop.domain.models import (
    DecidedBy,
    Decision,
    DecisionKind,
    SessionState,
)
from qoder_desktop.domain.session_options import SettingSource

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]


# Allow, deny and an edited input, as every way in must answer them, are
# tests/e2e/test_ways_in.py (this way is its "sdk"); here is what the ledger's tool rows
# say in a session the app started (its hooks report each call).


async def test_the_ledger_says_what_ran_the_edited_command(harness: Harness) -> None:
    await harness.start("bash")
    request = await harness.next_request()
    edited = dict(request.tool_input, command="echo edited > edited.txt")
    harness.broker.answer(request.request_id, Decision.allow_once(edited))
    await harness.wait_idle()
    assert (harness.workspace / "edited.txt").read_text() == "edited\n"
    events = [e for e in harness.ledger.entries(request.session_id)
              if e.entry_type == "tool_event"]
    assert [(e.status, e.original_input) for e in events] == [
        ("PreToolUse", dict(request.tool_input)), ("PostToolUse", edited)]


async def test_the_ledger_says_a_denied_call_was_seen_not_run(harness: Harness) -> None:
    await harness.start("bash")
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.deny("not on my machine, thanks"))
    await harness.wait_idle()
    assert not (harness.workspace / "hello.txt").exists()
    entries = harness.ledger.entries(request.session_id)
    assert [e.status for e in entries if e.entry_type == "tool_event"] == ["PreToolUse"]
    [approval] = [e for e in entries if e.entry_type == "approval"]
    assert approval.outcome == DecisionKind.DENY


async def test_allow_for_session_skips_the_second_ask_and_writes_no_project_settings(
        harness: Harness) -> None:
    session_id = await harness.start("repeat_command")
    first = await harness.next_request()
    assert first.tool_input["command"] == "touch marker.txt"
    harness.broker.answer(first.request_id, Decision.allow_session(
        dict(first.tool_input), session_grant("Bash(touch marker.txt)")))
    await harness.wait_idle()
    assert harness.requests.empty(), "the second identical command reached the callback"
    assert (harness.workspace / "marker.txt").exists()
    assert not (harness.workspace / ".claude").exists()
    assert [str(r.rule) for r in harness.hub.rules(session_id)] == ["Bash(touch marker.txt)"]


async def test_a_session_grant_on_the_agents_settings_file_still_asks_for_the_next_write(
        harness: Harness) -> None:
    """The CLI holds the grant but escalates writes to its own settings: a person decides."""
    session_id = await harness.start("sensitive_write")
    first = await harness.next_request()
    settings_file = harness.workspace / ".claude" / "settings.local.json"
    assert first.tool_name == "Write" and first.tool_input["file_path"] == str(settings_file)
    harness.broker.answer(first.request_id, Decision.allow_session(
        dict(first.tool_input), session_grant(f"Edit(/{settings_file})")))
    second = await harness.next_request()
    assert second.tool_input["content"] == '{"permissions": {"allow": ["Bash"]}}\n'
    harness.broker.answer(second.request_id, Decision.deny("No, you may not allow yourself Bash."))
    await harness.wait_idle()
    assert settings_file.read_text() == "{}\n"
    assert [str(r.rule) for r in harness.hub.rules(session_id)] == [f"Edit(/{settings_file})"]


async def test_revoked_session_rule_makes_the_next_identical_command_ask_again(
        harness: Harness) -> None:
    session_id = await harness.start("repeat_command")
    first = await harness.next_request()
    harness.broker.answer(first.request_id, Decision.allow_session(
        dict(first.tool_input), session_grant("Bash(touch marker.txt)")))
    await harness.wait_idle()
    assert harness.requests.empty()
    [rule] = harness.hub.rules(session_id)
    harness.hub.revoke_rule(rule.rule_id)
    await harness.hub.send(session_id, "Once more please. [scenario:repeat_command]")
    again = await harness.next_request()
    assert again.tool_input["command"] == "touch marker.txt"
    harness.broker.answer(again.request_id, Decision.deny("revoked, so no"))
    third = await harness.next_request()
    assert third.tool_input["command"] == "touch marker.txt"
    [rule] = harness.hub.rules(session_id)
    assert rule.removal_pending  # a deny carries no rule updates to the CLI
    harness.broker.answer(third.request_id, Decision.allow_once(dict(third.tool_input)))
    await harness.wait_idle()
    [rule] = harness.hub.rules(session_id)
    assert not rule.active and rule.removal_delivered_at is not None  # went with the allow


async def test_ask_user_question_answers_reach_the_model(harness: Harness) -> None:
    await harness.start("multi_question")
    request = await harness.next_request()
    assert request.tool_name == "AskUserQuestion"
    questions = parse_questions(request.tool_input)
    first, second = questions.questions
    answers = {first.question: QuestionAnswer(labels=("pytest",)),
               second.question: QuestionAnswer(labels=("Lint", "Types"), other_text="Docs")}
    harness.broker.answer(request.request_id, Decision.allow_once(
        encode_answers(request.tool_input, questions, answers),
        answer_labels=answer_labels(answers)))
    await harness.wait_idle()
    [result] = harness.results_for(request.tool_use_id)
    assert "pytest" in result
    assert "Lint, Types, Docs" in result


async def test_interrupt_while_pending_withdraws_the_request(harness: Harness) -> None:
    session_id = await harness.start("bash")
    request = await harness.next_request()
    await harness.hub.interrupt(session_id)
    event, finished, decision = await harness.next_finished()
    assert event is BrokerEvent.WITHDRAWN
    assert finished.request_id == request.request_id
    assert decision is not None and decision.decided_by is DecidedBy.WITHDRAWN
    assert not harness.broker.is_pending(request.request_id)
    assert not (harness.workspace / "hello.txt").exists()


async def test_killing_the_cli_withdraws_every_pending_request(harness: Harness) -> None:
    session_id = await harness.start("parallel")
    pending = [await harness.next_request(), await harness.next_request()]
    session = harness.hub._sessions[session_id]
    pid = session._client._transport._process.pid
    os.kill(pid, signal.SIGKILL)
    withdrawn = {(await harness.next_finished())[1].request_id for _ in pending}
    assert withdrawn == {r.request_id for r in pending}
    for _ in range(100):
        if harness.hub.session(session_id).state is SessionState.FAILED:
            break
        await asyncio.sleep(0.05)
    assert harness.hub.session(session_id).state is SessionState.FAILED
    assert harness.broker.pending() == []


def _cli_trusts_the_workspace(harness: Harness) -> None:
    """Accept the CLI's own trust prompt for the workspace, so only our gate decides."""
    config = harness.workspace.parent / "claude-config"
    config.mkdir(exist_ok=True)
    (config / ".claude.json").write_text(json.dumps(
        {"projects": {str(harness.workspace): {"hasTrustDialogAccepted": True}}}))


async def test_untrusted_workspace_settings_cannot_pre_allow_tools(harness: Harness) -> None:
    _cli_trusts_the_workspace(harness)
    settings_dir = harness.workspace / ".claude"
    settings_dir.mkdir()
    (settings_dir / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(*)", "Bash(touch marker.txt)"]}}')
    session_id = await harness.start("repeat_command", setting_sources=[SettingSource.PROJECT])
    request = await harness.next_request()
    assert request.tool_input["command"] == "touch marker.txt"
    harness.broker.answer(request.request_id, Decision.deny("untrusted", interrupt=True))
    await harness.wait_idle()
    assert not (harness.workspace / "marker.txt").exists()
    notes = [line.text for line in harness.hub.transcript(session_id)
             if line.kind.value == "system"]
    assert any("skipped: workspace not trusted" in note and "allows Bash(*)" in note
               for note in notes)


async def test_trusted_workspace_settings_do_load(harness: Harness) -> None:
    """The counterpart: once trusted, the same settings file really pre-allows the command."""
    settings_dir = harness.workspace / ".claude"
    settings_dir.mkdir()
    (settings_dir / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(touch marker.txt)"]}}')
    _cli_trusts_the_workspace(harness)
    harness.hub._is_trusted = lambda cwd: True
    await harness.start("repeat_command", setting_sources=[SettingSource.PROJECT])
    await harness.wait_idle()
    assert harness.requests.empty()
    assert (harness.workspace / "marker.txt").exists()
