"""What the person decided about a step's tool calls, read from the results the CLI sends.

The CLI tells the model what happened to a call only through its ``tool_result``:

* a deny: ``is_error`` with the deny message as the content (the person's reason, or
  Qoder Desktop's default);
* a failed tool: ``is_error`` with ``<tool_use_error>…`` (the CLI refused the input, e.g. an
  Edit whose old text is gone) or a shell command's ``Exit code N``;
* an edited input (Write, Edit, NotebookEdit): the result says "The user modified your
  proposed …" (an edited Bash command runs without any such notice, so it reads as allowed);
* an answered question: "Your questions have been answered: "Q"="A", …";
* anything else: allowed as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

from .request_info import ToolResultRecord

EDITED_MARKER = "The user modified your proposed"
ANSWERED_MARKER = "have been answered:"
TOOL_ERROR_RE = re.compile(r"^\s*(<tool_use_error>|Exit code \d+)")
ANSWER_RE = re.compile(r'"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"')


class Outcome(StrEnum):
    """How one step's tool calls ended, from the model's point of view."""

    ALLOWED = "allowed"
    EDITED = "edited"
    ANSWERED = "answered"
    FAILED = "failed"
    DENIED = "denied"


_PRIORITY = [Outcome.DENIED, Outcome.FAILED, Outcome.EDITED, Outcome.ANSWERED, Outcome.ALLOWED]


def classify(record: ToolResultRecord) -> Outcome:
    """The outcome of one tool call, from its result."""
    if record.is_error:
        return Outcome.FAILED if TOOL_ERROR_RE.match(record.content) else Outcome.DENIED
    if EDITED_MARKER in record.content:
        return Outcome.EDITED
    if ANSWERED_MARKER in record.content and record.tool_name == "AskUserQuestion":
        return Outcome.ANSWERED
    return Outcome.ALLOWED


def step_outcome(records: Iterable[ToolResultRecord]) -> Outcome | None:
    """The outcome of a step (its worst call: a deny beats a failure beats an edit…).

    None when no result of the step was received.
    """
    found = {classify(record) for record in records}
    return next((outcome for outcome in _PRIORITY if outcome in found), None)


def answers_text(records: Iterable[ToolResultRecord]) -> str:
    """The answers a person gave, as "A; B" (from an answered question's result)."""
    answers: list[str] = []
    for record in records:
        if ANSWERED_MARKER in record.content:
            answers.extend(answer for _question, answer in ANSWER_RE.findall(record.content))
    return "; ".join(answers)


def reason_text(records: Iterable[ToolResultRecord]) -> str:
    """What the denied or failed calls said back (the deny reason, the tool's error)."""
    texts = [record.content.strip() for record in records if record.is_error]
    return "; ".join(text for text in texts if text)
