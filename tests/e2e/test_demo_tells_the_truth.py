"""The scripted model tells the truth about what the person decided (real CLI)."""

from __future__ import annotations

import pytest
from helpers.claude_harness import Harness

from qoder_desktop.approval.questions import (
    QuestionAnswer,
    answer_labels,
    encode_answers,
    parse_questions,
)
from qoder_desktop.domain.models import Decision
from qoder_desktop.domain.session_options import TranscriptKind

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]


def _texts(harness: Harness, session_id: str) -> list[str]:
    return [line.text for line in harness.hub.transcript(session_id)
            if line.kind is TranscriptKind.ASSISTANT_TEXT]


async def test_after_a_deny_the_agent_does_not_claim_it_created_the_file(
        harness: Harness) -> None:
    session_id = await harness.start("bash")
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.deny("not today"))
    await harness.wait_idle()
    last = _texts(harness, session_id)[-1]
    assert "Created hello.txt" not in last
    assert "there is no hello.txt" in last and "not today" in last


async def test_an_allowed_call_still_gets_the_scenarios_closing_text(harness: Harness) -> None:
    session_id = await harness.start("bash")
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    await harness.wait_idle()
    assert _texts(harness, session_id)[-1] == 'Created hello.txt with the text "hello".'


async def test_after_an_edited_write_the_next_edit_is_not_attempted(harness: Harness) -> None:
    session_id = await harness.start("write_edit")
    request = await harness.next_request()
    assert request.tool_name == "Write"
    mine = "print('my own greeting')\n"
    harness.broker.answer(request.request_id,
                          Decision.allow_once(dict(request.tool_input, content=mine)))
    await harness.wait_idle()
    assert (harness.workspace / "greeting.py").read_text() == mine
    lines = harness.hub.transcript(session_id)
    assert [line.tool_name for line in lines if line.kind is TranscriptKind.TOOL_CALL] == ["Write"]
    assert not any("tool_use_error" in line.text for line in lines)
    assert "keep your version" in _texts(harness, session_id)[-1]


async def test_the_demo_goes_on_truthfully_after_a_deny_and_names_the_answer(
        harness: Harness) -> None:
    session_id = await harness.start("demo")
    bash = await harness.next_request()
    assert bash.tool_name == "Bash"
    harness.broker.answer(bash.request_id, Decision.deny("no shell today"))
    write = await harness.next_request()
    assert write.tool_name == "Write"
    harness.broker.answer(write.request_id, Decision.deny("no files either"))
    question = await harness.next_request()  # the Edit of a file never written is skipped
    assert question.tool_name == "AskUserQuestion"
    questions = parse_questions(question.tool_input)
    answers = {q.question: QuestionAnswer(labels=("Table",)) for q in questions.questions}
    harness.broker.answer(question.request_id, Decision.allow_once(
        encode_answers(question.tool_input, questions, answers),
        answer_labels=answer_labels(answers)))
    await harness.wait_idle()
    texts = _texts(harness, session_id)
    assert any(text.startswith("OK, I did not run that command") for text in texts)
    assert any(text.startswith("OK, no notes.md then") for text in texts)
    assert texts[-1].startswith("You chose: Table.")
    assert not (harness.workspace / "hello.txt").exists()
    assert not (harness.workspace / "notes.md").exists()
    lines = harness.hub.transcript(session_id)
    assert "Edit" not in [line.tool_name for line in lines if line.kind is TranscriptKind.TOOL_CALL]
