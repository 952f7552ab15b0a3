"""What a tool call acts on, in one place: the transcript, the queue, the tray and the
notifications all summarize a call by this."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SUBJECT_KEYS = ("command", "file_path", "notebook_path", "path", "url", "pattern", "query",
                "plan", "description", "prompt")
"""Input fields that say what a call acts on, most telling first."""


def tool_subject(tool_input: Mapping[str, Any]) -> str:
    """The question texts (joined by " / "), else the first non-blank of `SUBJECT_KEYS`,
    else "N edits"; '' when the input has none of these. The agent's text is returned
    as it is: callers make it visible, single-line and bounded for their view."""
    questions = tool_input.get("questions")
    if isinstance(questions, list) and questions:
        texts = [str(q.get("question", "")) for q in questions if isinstance(q, dict)]
        joined = " / ".join(text for text in texts if text)
        if joined:
            return joined
    for key in SUBJECT_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        return f"{len(edits)} edits"
    return ""
