"""Transcript lines in our own terms: input summaries, result text, results paired with their
calls, and how a turn a person ended reads.

A transcript is shown in the order its lines arrive. Parallel tool calls make that order
misleading: two calls come first, then both results, so a result sits under the wrong
call. `ToolCallPairing` pairs each result with its call by ``tool_use_id``: it names the
tool on the result, and when the result does not sit right under its own call, its text
starts with a line that names the call it belongs to. Qt-free; used by the SDK adapters
and by the terminal transcript follower.
"""

from __future__ import annotations

import json
from typing import Any

from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.text.subject import tool_subject

SUMMARY_LIMIT = 2_000
"""Characters of a tool call's input summary kept in the transcript."""

PAIRING_LIMIT = 1_000
"""Calls waiting for their results that a pairing remembers (the oldest go first)."""

RESULT_LABEL = "↳ "
"""How the line that names a result's call starts."""
LABEL_LIMIT = 120
"""Characters of the call's summary kept in a result's label."""

INTERRUPTED_TEXT = "Interrupted."
"""What the transcript says when a person interrupted the turn."""
STOPPED_TEXT = "Stopped by you."
"""What the transcript says when a person denied a call and stopped the agent."""


def summarize_input(tool_input: dict[str, Any]) -> str:
    """A plain-text summary of a tool call's input for the transcript (the tool name apart):
    its subject (`text.subject.tool_subject`), else the input as JSON.

    Long inputs say how much was left out; nothing is cut silently.
    """
    text = tool_subject(tool_input)
    if not text:
        questions = tool_input.get("questions")
        text = json.dumps(questions if isinstance(questions, list) and questions
                          else tool_input, ensure_ascii=False, sort_keys=True)
    if len(text) > SUMMARY_LIMIT:
        text = f"{text[:SUMMARY_LIMIT]}… ({len(text) - SUMMARY_LIMIT} more characters)"
    return text


def result_text(content: Any) -> str:
    """The text of a tool result's content (text blocks as text, anything else as JSON)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        else:
            parts.append(json.dumps(item, ensure_ascii=False, default=str))
    return "\n".join(parts)


def call_label(tool_name: str, summary: str) -> str:
    """The one-line name of a tool call, e.g. ``Read /etc/hosts`` (long ones shortened)."""
    first = summary.splitlines()[0] if summary else ""
    text = f"{tool_name} {first}".strip()
    if len(text) > LABEL_LIMIT or len(summary.splitlines()) > 1:
        text = text[:LABEL_LIMIT].rstrip() + "…"
    return text


class ToolCallPairing:
    """Pairs tool results with their calls by ``tool_use_id`` in one transcript.

    Feed it every line of the transcript, in order, through `pair`.
    """

    def __init__(self) -> None:
        self._calls: dict[str, tuple[str, str]] = {}
        self._last_call: str | None = None
        self._result_since_call = False

    def pair(self, line: TranscriptEvent) -> TranscriptEvent:
        """The line to show: a result gets its call's tool name, and a label if needed."""
        if line.kind is TranscriptKind.TOOL_CALL:
            if line.tool_use_id:
                self._calls[line.tool_use_id] = (line.tool_name or "Tool", line.text)
                if len(self._calls) > PAIRING_LIMIT:  # calls whose results never came
                    del self._calls[next(iter(self._calls))]
            self._last_call = line.tool_use_id
            self._result_since_call = False
            return line
        if line.kind is not TranscriptKind.TOOL_RESULT or not line.tool_use_id:
            return line
        call = self._calls.pop(line.tool_use_id, None)
        right_under = line.tool_use_id == self._last_call and not self._result_since_call
        self._result_since_call = True
        if call is None:
            return line
        tool_name, summary = call
        update: dict[str, object] = {"tool_name": line.tool_name or tool_name}
        if not right_under:
            label = RESULT_LABEL + call_label(tool_name, summary)
            update["text"] = f"{label}\n{line.text}" if line.text else label
        return line.model_copy(update=update)
