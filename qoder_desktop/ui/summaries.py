"""Short, plain-text summaries of requests for lists, menus and notifications.

Model data is never trusted as markup: these helpers only produce plain, single-line,
length-bounded text. Views show it with plain-text widgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qoder_desktop.domain.kinds import RequestKind
from qoder_desktop.text.subject import call_summary, plan_heading, question_texts
from qoder_desktop.text.visible import make_visible

if TYPE_CHECKING:  # pydantic and the models load after the first paint
    from qoder_desktop.domain.models import ApprovalRequest


def one_line(text: str) -> str:
    """Hidden characters as markers (`make_visible`), then newlines, tabs and runs of
    spaces collapsed into single spaces: a bidi override cannot reorder the line."""
    return " ".join(make_visible(str(text)).split())


def elide(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` characters, ending with an ellipsis when cut."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


def input_summary(tool_name: str, tool_input: dict[str, Any]) -> str:
    """What a tool call asks (`text.subject.call_summary`, the transcript's words too),
    on one line (may be '')."""
    return one_line(call_summary(tool_name, tool_input))


def request_summary(request: ApprovalRequest, limit: int = 160) -> str:
    """A one-line description of what `request` asks, bounded to `limit` characters."""
    if request.kind is RequestKind.QUESTION:
        text = question_texts(request.tool_input) or "The agent has a question"
        return elide(one_line(text), limit)
    if request.kind is RequestKind.PLAN:
        has_heading = bool(one_line(plan_heading(request.tool_input.get("plan"))))
        text = input_summary(request.tool_name, request.tool_input) if has_heading \
            else "Plan approval"
        return elide(text, limit)
    detail = input_summary(request.tool_name, request.tool_input)
    text = f"{request.label}: {detail}" if detail else request.label
    return elide(one_line(text), limit)


def covered_note(request: ApprovalRequest) -> str | None:
    """Why a request a person's session rule covers still waits for them (None when no
    rule covers it): the one wording of the dialog, the queue and the notification.

    A rule granted while the request waited: the agent's CLI asked before it held it, so
    nothing was allowed for the person. Otherwise the CLI holds the rule and asked anyway.
    """
    rule = request.covered_by_rule
    if rule is None:
        return None
    rule = one_line(rule)
    if request.granted_while_waiting:
        return (f"Covered by your new rule {rule}, but the agent asked before it held that "
                "rule, so nothing was allowed for you: you decide (Ctrl+Return allows this "
                "call once).")
    return (f"Your session rule {rule} covers this call, but the agent asked anyway (it "
            "treats this call as sensitive or different), so you decide.")


def covered_mark(request: ApprovalRequest) -> str | None:
    """A short mark for lists: "covered by your new rule X" (None when not marked)."""
    if request.covered_by_rule is None or not request.granted_while_waiting:
        return None
    return f"covered by your new rule {one_line(request.covered_by_rule)} — you decide"


def session_label(request: ApprovalRequest) -> str:
    """The name of the request's session (its id prefix when it has no name)."""
    return one_line(request.session_name) or request.session_id[:8]


def kind_label(request: ApprovalRequest) -> str:
    """`Approval`, `Question` or `Plan`: what sort of answer the request needs."""
    return {
        RequestKind.QUESTION: "Question",
        RequestKind.PLAN: "Plan",
        RequestKind.TOOL: "Approval",
    }[request.kind]
