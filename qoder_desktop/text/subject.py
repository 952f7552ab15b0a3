"""What a tool call acts on, in one place: the transcript, the queue, the tray and the
notifications all summarize a call by `call_summary` (and its parts below).

Everything here returns the agent's text as it is: callers make it visible, single-line
and bounded for their view.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from qoder_desktop.domain.tools import PLAN_TOOL

SUBJECT_KEYS = ("command", "file_path", "notebook_path", "path", "url", "pattern", "query",
                "plan", "description", "prompt")
"""Input fields that say what a call acts on, most telling first."""


def question_texts(tool_input: Mapping[str, Any]) -> str:
    """The texts of an `AskUserQuestion` input's questions (a question without text by its
    header), joined by " / "; '' when there are none."""
    questions = tool_input.get("questions")
    if not isinstance(questions, list):
        return ""
    texts = (str(q.get("question") or q.get("header") or "") for q in questions
             if isinstance(q, dict))
    return " / ".join(text for text in texts if text)


def plan_heading(plan: object) -> str:
    """A plan's first non-blank line without its markdown heading marks and without a
    leading "Plan:" ("# Plan: add x" is "add x"); '' when that leaves nothing."""
    first = next((line for line in str(plan or "").splitlines() if line.strip()), "")
    heading = first.strip().lstrip("#").strip()
    if heading[:5].lower() == "plan:":
        heading = heading[5:].lstrip()
    return heading


def tool_subject(tool_input: Mapping[str, Any]) -> str:
    """The question texts (`question_texts`), else the first non-blank of `SUBJECT_KEYS`,
    else "N edits"; '' when the input has none of these."""
    questions = question_texts(tool_input)
    if questions:
        return questions
    for key in SUBJECT_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        return f"{len(edits)} edits"
    return ""


def call_summary(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    """The one summary of a tool call (the tool's name apart): "Plan: <its heading>" for
    `ExitPlanMode` ("Plan" when it has none), else `tool_subject`, else the input as
    JSON (keys sorted); '' for an empty input. Unbounded."""
    plan = tool_input.get("plan") if tool_name == PLAN_TOOL else None
    if isinstance(plan, str) and plan.strip():
        heading = plan_heading(plan)
        return f"Plan: {heading}" if heading else "Plan"
    subject = tool_subject(tool_input)
    if subject or not tool_input:
        return subject
    return json.dumps(dict(tool_input), ensure_ascii=False, sort_keys=True, default=str)
