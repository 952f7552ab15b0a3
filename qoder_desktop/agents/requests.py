"""An SDK's permission callback arguments as a `ToolCall` (the request is built by
`approval.source`, as for every way in)."""

from __future__ import annotations

from typing import Any

from qoder_desktop.approval.source import ToolCall


def call_from_context(tool_name: str, tool_input: dict[str, Any], context: Any) -> ToolCall:
    """The call in one `can_use_tool` callback (both SDKs name the context's fields alike;
    its suggestions stay raw for the one parser)."""
    return ToolCall(
        tool_name, tool_input, getattr(context, "tool_use_id", None),
        suggestions=getattr(context, "suggestions", None),
        title=getattr(context, "title", None),
        display_name=getattr(context, "display_name", None),
        description=getattr(context, "description", None),
        decision_reason=getattr(context, "decision_reason", None),
        blocked_path=getattr(context, "blocked_path", None),
        agent_id=getattr(context, "agent_id", None))
