"""What the transcript says, through the real CLI: how a turn a person ended reads, and
which call each result of parallel calls belongs to."""

from __future__ import annotations

import asyncio

import pytest
from helpers.claude_harness import Harness
from helpers.loop import settle

from qoder_desktop.agents.transcript import INTERRUPTED_TEXT, RESULT_LABEL, STOPPED_TEXT
from qoder_desktop.domain.models import Decision, SessionState
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.terminal.transcript import TranscriptFollower

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]


def _after_prompt(harness: Harness, session_id: str) -> list[TranscriptEvent]:
    lines = harness.hub.transcript(session_id)
    start = max(i for i, line in enumerate(lines) if line.kind is TranscriptKind.USER_PROMPT)
    return lines[start:]


def _no_diagnostic(harness: Harness, session_id: str) -> None:
    lines = harness.hub.transcript(session_id)
    assert not [line for line in lines if line.kind is TranscriptKind.ERROR], lines
    assert not any("ede_diagnostic" in line.text for line in lines)
    info = harness.hub.session(session_id)
    assert info.state is SessionState.IDLE and info.error is None


async def test_an_interrupted_turn_says_interrupted_not_an_error(harness: Harness) -> None:
    session_id = await harness.start("bash")
    await harness.next_request()
    await harness.hub.interrupt(session_id)
    await harness.wait_idle()
    assert _after_prompt(harness, session_id)[-1].text == INTERRUPTED_TEXT
    _no_diagnostic(harness, session_id)


async def test_deny_and_stop_says_stopped_by_you(harness: Harness) -> None:
    session_id = await harness.start("bash")
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.deny("not now", interrupt=True))
    await harness.wait_idle()
    last = _after_prompt(harness, session_id)[-1]
    assert (last.kind, last.text) == (TranscriptKind.SYSTEM, STOPPED_TEXT)
    _no_diagnostic(harness, session_id)
    # The next turn ends normally again.
    await harness.hub.send(session_id, "Try again. [scenario:bash]")
    again = await harness.next_request()
    harness.broker.answer(again.request_id, Decision.allow_once(dict(again.tool_input)))
    await harness.wait_idle()
    assert _after_prompt(harness, session_id)[-1].kind is TranscriptKind.RESULT


async def test_parallel_results_name_the_call_they_belong_to(harness: Harness) -> None:
    session_id = await harness.start("parallel")
    first, second = await harness.next_request(), await harness.next_request()
    by_path = {r.tool_input["file_path"]: r for r in (first, second)}
    # Answer the later call first, so the results arrive in the other order too.
    later = by_path["/etc/shells"]
    harness.broker.answer(later.request_id, Decision.allow_once(dict(later.tool_input)))
    await settle(lambda: any(line.kind is TranscriptKind.TOOL_RESULT
                             and line.tool_use_id == later.tool_use_id
                             for line in harness.hub.transcript(session_id)), timeout=30)
    harness.broker.answer(by_path["/etc/hosts"].request_id,
                          Decision.allow_once(dict(by_path["/etc/hosts"].tool_input)))
    await harness.wait_idle()
    lines = harness.hub.transcript(session_id)
    calls = {line.tool_use_id: line for line in lines if line.kind is TranscriptKind.TOOL_CALL}
    results = [line for line in lines if line.kind is TranscriptKind.TOOL_RESULT]
    assert len(results) == 2
    # Both calls come before both results: at least one result is not under its call.
    assert any(result.text.startswith(RESULT_LABEL) for result in results)
    for result in results:
        call = calls[result.tool_use_id]
        assert result.tool_name == "Read"
        content = open(call.text).read().splitlines()[0]  # noqa: SIM115 - a system file
        assert content in result.text
        # A result that does not sit right under its call names that call first.
        right_under = lines[lines.index(result) - 1] is call
        if not right_under:
            assert result.text.startswith(f"{RESULT_LABEL}Read {call.text}\n")
    # Each result shown under another call names its own call, never the one above it.
    for index, line in enumerate(lines):
        if line.kind is TranscriptKind.TOOL_RESULT and lines[index - 1].kind is (
                TranscriptKind.TOOL_CALL) and lines[index - 1].tool_use_id != line.tool_use_id:
            assert line.text.startswith(RESULT_LABEL)


async def test_the_terminal_follower_pairs_parallel_results_in_the_cli_transcript_file(
        harness: Harness) -> None:
    """The JSON-lines transcript the real CLI wrote, read as a terminal session's would be."""
    session_id = await harness.start("parallel")
    first, second = await harness.next_request(), await harness.next_request()
    for request in (second, first):  # the later call's result comes first
        harness.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        await settle(lambda request=request: any(
            line.kind is TranscriptKind.TOOL_RESULT and line.tool_use_id == request.tool_use_id
            for line in harness.hub.transcript(session_id)), timeout=30)
    await harness.wait_idle()
    config = harness.workspace.parent / "claude-config"
    [path] = list(config.glob("projects/*/*.jsonl"))
    seen: list[TranscriptEvent] = []
    follower = TranscriptFollower(path, "terminal-1", seen.append)
    while follower.poll() or follower.behind:  # a slice per poll
        pass
    assert follower.skipped == 0
    calls = {line.tool_use_id: line for line in seen if line.kind is TranscriptKind.TOOL_CALL}
    results = [line for line in seen if line.kind is TranscriptKind.TOOL_RESULT]
    assert sorted(calls[r.tool_use_id].text for r in results) == ["/etc/hosts", "/etc/shells"]
    assert any(result.text.startswith(RESULT_LABEL) for result in results)
    for result in results:
        call = calls[result.tool_use_id]
        content = open(call.text).read().splitlines()[0]  # noqa: SIM115 - a system file
        assert content in result.text
        if seen[seen.index(result) - 1] is not call:
            assert result.text.startswith(f"{RESULT_LABEL}Read {call.text}\n")


async def test_interrupting_a_slow_model_turn_says_interrupted(harness: Harness) -> None:
    """Interrupted while the model still streams (no request pending)."""
    seen = len(harness.model.server.requests)
    session_id = await harness.start("slow")
    for _ in range(200):  # the turn reached the model, which is now "thinking"
        if any(r.scenario == "slow" for r in harness.model.server.requests[seen:]):
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    await harness.hub.interrupt(session_id)
    await harness.wait_idle()
    assert _after_prompt(harness, session_id)[-1].text == INTERRUPTED_TEXT
    _no_diagnostic(harness, session_id)
