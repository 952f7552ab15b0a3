"""The phone's view of a waiting request, and a phone's answer turned into a `Decision`.

Each fact comes from the one place the desk takes it from: hidden characters from
`text.visible`, the summary from `text.subject.call_summary`, the risk lens's findings
from `shell.risk`, the rules "allow for this session" adds from `rules.offer` (what the
approval dialog offers), questions from `approval.questions` and previews as plain text
(`preview.html_text` for HTML; markdown is shown as its source). Every string is made
visible before it leaves (hidden characters as ⟨…⟩ markers); the page shows them with
`textContent` only.

An answer becomes the same `Decision` the desk's dialogs make, through the same
builders (`Decision.allow_once`, `allow_session`, `deny`, `keep_planning`, and
`questions.encode_answers` for answers), with `decided_by=USER` and `device` = the
device's label. A phone never allows a request whose input it was not shown (over
`MAX_INPUT_BYTES`), and an approved plan continues in default mode: a phone never grants
a mode that stops the agent asking.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from qoder_desktop.approval.questions import (
    QuestionAnswer,
    QuestionInputError,
    QuestionSet,
    answer_labels,
    encode_answers,
    parse_questions,
)
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    PermissionMode,
    RequestKind,
)
from qoder_desktop.domain.tools import BASH_TOOL
from qoder_desktop.preview.html_text import html_to_text, normalize_html
from qoder_desktop.preview.sanitize import MAX_PREVIEW_CHARS, sniff_kind
from qoder_desktop.rules.offer import ANALYSIS_LIMIT, session_offer
from qoder_desktop.shell.risk import Severity, analyze_command
from qoder_desktop.text.subject import call_summary
from qoder_desktop.text.visible import (
    has_hidden,
    hidden_in_request_texts,
    hidden_in_value,
    make_visible,
)

__all__ = ["DEFAULT_DENY", "DEFAULT_DENY_STOP", "DEFAULT_KEEP_PLANNING", "MAX_INPUT_BYTES",
           "THIS_DESK", "AnswerRefused", "decision_for", "input_size", "request_view"]

MAX_INPUT_BYTES = 64 * 1024
"""An input whose pretty JSON is larger goes to the phone as null ("answer at the desk")."""
MAX_SUMMARY_CHARS = 300
MAX_FINDINGS = 50
MAX_MESSAGE_CHARS = 4000
DEFAULT_DENY = "Denied from the phone"
DEFAULT_DENY_STOP = "Denied from the phone, and the agent was told to stop"
DEFAULT_DECLINE = "The user declined to answer the question (from the phone)."
DEFAULT_KEEP_PLANNING = "Keep planning."
THIS_DESK = "this desk"
_LEVELS = {Severity.DANGER: "high", Severity.WARNING: "medium", Severity.INFO: "low"}
_KINDS = {RequestKind.TOOL: "tool", RequestKind.QUESTION: "question",
          RequestKind.PLAN: "plan"}
_ALLOWED: dict[RequestKind, frozenset[str]] = {
    RequestKind.TOOL: frozenset({"allow", "allow_session", "deny", "deny_stop"}),
    RequestKind.QUESTION: frozenset({"answer", "deny", "deny_stop"}),
    RequestKind.PLAN: frozenset({"approve_plan", "keep_planning", "deny_stop"}),
}
"""The decisions each kind of request takes from a phone (as its desk dialog has them)."""


class AnswerRefused(ValueError):
    """A verified answer that does not fit its request; `reason` is the contract's word
    ("invalid"), the text says what is wrong (no secrets, no input)."""

    def __init__(self, detail: str, reason: str = "invalid") -> None:
        super().__init__(detail)
        self.reason = reason


# -- the request, as the phone sees it ----------------------------------------------------


def _pretty(tool_input: Mapping[str, Any]) -> str:
    return json.dumps(dict(tool_input), indent=2, ensure_ascii=False, default=str)


def input_size(request: ApprovalRequest) -> int:
    """The size in bytes of the request's input as pretty JSON (what the phone is sent)."""
    return len(_pretty(request.tool_input).encode("utf-8"))


def _shown(text: str | None, limit: int | None = None) -> str:
    shown = make_visible(text or "")
    if limit is not None and len(shown) > limit:
        shown = shown[:limit - 1] + "…"
    return shown


def _hidden(request: ApprovalRequest) -> list[str]:
    names = hidden_in_value(dict(request.tool_input))
    names += [name for name in hidden_in_request_texts(request) if name not in names]
    marked = []
    for name in names:
        label, times, count = name.partition(" ×")
        marked.append(f"⟨{label}⟩{times}{count}")
    return marked


def _findings(request: ApprovalRequest) -> list[dict[str, str]]:
    command = request.tool_input.get("command") if request.tool_name == BASH_TOOL else None
    if not isinstance(command, str) or not command:
        return []
    if len(command) > ANALYSIS_LIMIT:
        return [{"level": "low", "text": f"Not analysed: the command is too large "
                                         f"({len(command):,} characters)."}]
    order = [Severity.DANGER, Severity.WARNING, Severity.INFO]
    ranked = sorted(analyze_command(command, request.cwd, request.add_dirs),
                    key=lambda f: (order.index(f.severity), f.start))
    result = []
    for finding in ranked[:MAX_FINDINGS]:
        excerpt = _shown(command[finding.start:min(finding.end, finding.start + 80)], 60)
        result.append({"level": _LEVELS[finding.severity],
                       "text": f"{excerpt} — {finding.explanation}"})
    return result


def _preview_text(preview: str | None) -> str | None:
    if not preview:
        return None
    text = preview[:MAX_PREVIEW_CHARS]
    if sniff_kind(text) == "html":
        text = html_to_text(normalize_html(text))
    return _shown(text)


def _questions(request: ApprovalRequest) -> list[dict[str, Any]]:
    try:
        questions = parse_questions(request.tool_input)
    except QuestionInputError:
        return []  # (only a deny fits a malformed question; the desk's dialog refuses it)
    return [{"question": _shown(q.question), "header": _shown(q.header),
             "multi": q.multi_select,
             "options": [{"label": _shown(o.label), "description": _shown(o.description),
                          "preview": _preview_text(o.preview)} for o in q.options]}
            for q in questions.questions]


def request_view(request: ApprovalRequest, nonce: str) -> dict[str, Any]:
    """The contract's Request dict for `request`, with this connection's `nonce`."""
    kind = request.kind
    pretty = _pretty(request.tool_input)
    size = len(pretty.encode("utf-8"))
    too_large = size > MAX_INPUT_BYTES
    offer = session_offer(request) if kind is RequestKind.TOOL and not too_large else None
    plan = request.tool_input.get("plan") if kind is RequestKind.PLAN else None
    return {
        "id": request.request_id,
        "nonce": nonce,
        "kind": _KINDS[kind],
        "tool": _shown(request.label, MAX_SUMMARY_CHARS),
        "summary": _shown(call_summary(request.tool_name, request.tool_input),
                          MAX_SUMMARY_CHARS),
        "session": {"id": request.session_id,
                    "name": _shown(request.session_name or request.session_id),
                    "host": _shown(request.host) if request.host else THIS_DESK,
                    "cwd": _shown(request.cwd)},
        "received_at": request.received_at.isoformat(),
        "input": None if too_large else make_visible(pretty),
        "too_large": too_large,
        "size": size,
        "hidden": _hidden(request),
        "findings": _findings(request),
        "suggestions": [] if offer is None else [
            {"index": index, "rule": _shown(str(rule)), "scope": "this session"}
            for index, rule in enumerate(offer.rules())],
        "questions": _questions(request) if kind is RequestKind.QUESTION else [],
        "plan": _shown(plan) if isinstance(plan, str) else None,
        "covered_by": _shown(request.covered_by_rule) if request.covered_by_rule else None,
    }


# -- an answer, as the desk's dialogs would make it ---------------------------------------


def _message(content: Mapping[str, Any], default: str) -> str:
    message = content.get("message", "")
    if not isinstance(message, str) or len(message) > MAX_MESSAGE_CHARS:
        raise AnswerRefused(f"a message must be text of at most {MAX_MESSAGE_CHARS} characters")
    if has_hidden(message):
        raise AnswerRefused("a message must not hold hidden characters")
    return message.strip() or default


def _answers(questions: QuestionSet, content: Mapping[str, Any]
             ) -> dict[str, QuestionAnswer]:
    """The phone's `{"answers": {question: [label, …]}}` by the questions' own texts and
    labels (the phone was shown them made visible)."""
    raw = content.get("answers")
    if not isinstance(raw, dict):
        raise AnswerRefused("an answer needs {\"answers\": {question: [label, …]}}")
    by_shown = {make_visible(q.question): q for q in questions.questions}
    result: dict[str, QuestionAnswer] = {}
    for shown, labels in raw.items():
        question = by_shown.get(shown)
        if question is None or not isinstance(labels, list) or not all(
                isinstance(label, str) for label in labels):
            raise AnswerRefused("an answer names a question that was not asked, or is not "
                                "a list of labels")
        known = {make_visible(option.label): option.label for option in question.options}
        if any(label not in known for label in labels):
            raise AnswerRefused("an answer names an option the question does not have")
        result[question.question] = QuestionAnswer(
            labels=tuple(known[label] for label in labels))
    return result


def _decide(request: ApprovalRequest, decision: str, content: Mapping[str, Any]) -> Decision:
    kind = request.kind
    if decision not in _ALLOWED[kind]:
        raise AnswerRefused(f"{decision!r} is not an answer to a {_KINDS[kind]} request")
    if decision in ("allow", "allow_session") and input_size(request) > MAX_INPUT_BYTES:
        raise AnswerRefused("the input is too large to show on the phone; answer at the desk")
    if decision == "allow":
        return Decision.allow_once(dict(request.tool_input))
    if decision == "allow_session":
        indexes = content.get("rules")
        if not isinstance(indexes, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in indexes):
            raise AnswerRefused("allow for this session needs {\"rules\": [index, …]}")
        try:
            updates = session_offer(request).chosen(indexes)
        except ValueError as exc:
            raise AnswerRefused(str(exc)) from None
        return Decision.allow_session(dict(request.tool_input), updates)
    if decision == "deny":
        default = DEFAULT_DECLINE if kind is RequestKind.QUESTION else DEFAULT_DENY
        return Decision.deny(_message(content, default))
    if decision == "deny_stop":
        return Decision.deny(_message(content, DEFAULT_DENY_STOP), interrupt=True)
    if decision == "answer":
        try:
            questions = parse_questions(request.tool_input)
            answers = _answers(questions, content)
            final = encode_answers(request.tool_input, questions, answers)
        except QuestionInputError as exc:
            raise AnswerRefused(str(exc)) from None
        return Decision.allow_once(final, answer_labels=answer_labels(answers))
    if decision == "approve_plan":
        return Decision.allow_once(dict(request.tool_input), next_mode=PermissionMode.DEFAULT)
    return Decision.keep_planning(_message(content, DEFAULT_KEEP_PLANNING))


def decision_for(request: ApprovalRequest, decision: str, content: Mapping[str, Any],
                 device_label: str) -> Decision:
    """The desk's `Decision` for a phone's verified answer to `request`.

    Raises:
        AnswerRefused: the answer does not fit the request (another kind's decision, an
            allow of an input the phone was not shown, an unknown rule or option, a
            malformed message); nothing is decided.
    """
    return _decide(request, decision, content).model_copy(update={"device": device_label})
