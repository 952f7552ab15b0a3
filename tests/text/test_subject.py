"""The one summary of a tool call (`text.subject.call_summary`), and every view that
shows a request — the transcript, the queue, the tray menu and the notification — saying
the same about it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from qoder_desktop.agents.transcript import summarize_call
from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.text.subject import call_summary, plan_heading, question_texts

QUESTIONS = {"questions": [{"question": "Which layout?", "header": "Layout", "options": []},
                           {"question": "", "header": "Colour", "options": []}]}


@pytest.mark.parametrize(("tool", "tool_input", "summary"), [
    ("Bash", {"command": "make test", "description": "Run the tests"}, "make test"),
    ("Write", {"file_path": "/w/notes.md", "content": "x"}, "/w/notes.md"),
    ("MultiEdit", {"edits": [{}, {}]}, "2 edits"),
    ("AskUserQuestion", QUESTIONS, "Which layout? / Colour"),
    ("ExitPlanMode", {"plan": "\n# Plan: add a greeting\n\n1. Create it."},
     "Plan: add a greeting"),
    ("ExitPlanMode", {"plan": "## \n1. tidy"}, "Plan"),
    ("mcp__db__query", {"sql": "select 1", "limit": 3}, '{"limit": 3, "sql": "select 1"}'),
    ("Tool", {}, ""),
])
def test_a_call_is_summarized_by_what_it_acts_on(tool: str, tool_input: dict[str, object],
                                                 summary: str) -> None:
    assert call_summary(tool, tool_input) == summary


def test_the_parts_of_the_summary() -> None:
    assert question_texts({"questions": "nope"}) == ""
    assert plan_heading("  \n### plan:   tidy up\n") == "tidy up"
    assert plan_heading("# Plan:\nmore") == ""
    assert plan_heading(None) == ""


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Bash", {"command": "rm -rf build", "description": "Clean"}),
    ("mcp__db__query", {"sql": "select 1", "limit": 3}),
    ("AskUserQuestion", QUESTIONS),
    ("ExitPlanMode", {"plan": "# Plan: add a greeting\n\n1. Create it."}),
])
def test_the_transcript_the_queue_the_tray_and_the_notification_say_the_same(
        tool: str, tool_input: dict[str, object], qapp) -> None:  # type: ignore[no-untyped-def]
    from qoder_desktop.ui.summaries import request_summary
    from qoder_desktop.ui.tray import format_notification

    request = ApprovalRequest(session_id="s", session_name="demo", backend=Backend.CLAUDE,
                              tool_name=tool, tool_input=tool_input)
    summary = call_summary(tool, tool_input)
    assert summary
    assert summarize_call(tool, tool_input) == summary  # the transcript's line
    assert summary in request_summary(request)  # the queue's row and the tray's menu
    assert summary in format_notification(request).body  # the notification
