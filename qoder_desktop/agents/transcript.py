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
import re
from typing import Any

from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.text.subject import call_summary

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


def summarize_call(tool_name: str, tool_input: dict[str, Any]) -> str:
    """A tool call's line in the transcript (the tool name apart): its summary
    (`text.subject.call_summary`, the one every view shows), bounded.

    Long summaries say how much was left out; nothing is cut silently.
    """
    text = call_summary(tool_name, tool_input)
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

    def renamed(self, tool_use_id: str, summary: str) -> None:
        """The call now runs with another input (the person edited it): name that."""
        if tool_use_id in self._calls:
            self._calls[tool_use_id] = (self._calls[tool_use_id][0], summary)

    def forget(self, tool_use_id: str) -> None:
        """The call's result will not be shown (it only repeated a denial)."""
        self._calls.pop(tool_use_id, None)
        if tool_use_id == self._last_call:
            self._result_since_call = True

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


_TOOL_USE_ERROR = re.compile(r"</?tool_use_error>")
_SYSTEM_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.DOTALL)
_CONTEXT_NOTE = re.compile(r"\s*\((?:[^()]*) in your context(?:[^()]*)\)")
"""A note the CLI adds for the model, e.g. "(file state is current in your context — no
need to Read it back)"."""
_CLI_PROMPTS: tuple[tuple[str, str], ...] = (
    ("Entered plan mode", "Entered plan mode: the agent explores and plans, and changes "
                          "nothing until you approve a plan."),
    ("User has approved your plan", "Plan approved."),
    ("The user doesn't want to proceed with this tool use", "Not run: you declined it."),
    ("The user doesn't want to take this action right now", "Not run: you declined it."),
)
"""The CLI's own instructions to the model, by how they start, and what a person reads
instead (the instructions stay one click away, under "details")."""
STOP_PROMPT = "STOP what you are doing"
"""How the CLI tells the model to stop after a refusal; folded away when a result holds it."""


def readable_result(text: str) -> tuple[str, str]:
    """A tool result's text as a person reads it, and what is folded under "details".

    The CLI's `<tool_use_error>` tags go (the line is marked as an error anyway); its
    `<system-reminder>` blocks and its instructions to the model (plan-mode rules, "STOP
    what you are doing…") move to the details, and a short line says what happened.
    """
    text = _TOOL_USE_ERROR.sub("", text)
    reminders = [m.group(0).strip() for m in _SYSTEM_REMINDER.finditer(text)]
    reminders += [m.group(0).strip() for m in _CONTEXT_NOTE.finditer(text)]
    shown = _CONTEXT_NOTE.sub("", _SYSTEM_REMINDER.sub("\n", text)).strip()
    details = "\n\n".join(reminders)
    for start, summary in _CLI_PROMPTS:
        if shown.startswith(start):
            return summary, "\n\n".join(part for part in (shown, details) if part)
    stop = shown.find(STOP_PROMPT)
    if stop >= 0:
        return (shown[:stop].strip() or "Not run.",
                "\n\n".join(part for part in (shown, details) if part))
    return shown, details


def edited_fields(original: dict[str, Any], final: dict[str, Any]) -> str:
    """What the agent asked for, field by field, where the person changed it (for the fold
    under an edited call): ``command: echo 'Hello from the demo' > hello.txt``."""
    lines = []
    for key in sorted(set(original) | set(final)):
        if original.get(key) == final.get(key):
            continue
        value = original.get(key)
        if key not in original:
            shown = "(not given; you added it)"
        elif isinstance(value, str):
            shown = value
        else:
            shown = json.dumps(value, ensure_ascii=False, sort_keys=True)
        if len(shown) > SUMMARY_LIMIT:
            shown = f"{shown[:SUMMARY_LIMIT]}… ({len(shown) - SUMMARY_LIMIT} more characters)"
        lines.append(f"{key}: {shown}" if "\n" not in shown else f"{key}:\n{shown}")
    return "\n".join(lines)
