"""An SDK's permission callback arguments turned into our `ApprovalRequest`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from qoder_desktop.domain.models import ApprovalRequest, PermissionSuggestion, SessionInfo
from qoder_desktop.domain.session_options import SessionOptions

log = logging.getLogger(__name__)


def suggestions_from_context(context: Any,
                             update_problem: Callable[[PermissionSuggestion], str | None],
                             ) -> tuple[PermissionSuggestion, ...]:
    """The CLI's permission suggestions this SDK can deliver; malformed ones are dropped.

    A dropped suggestion only means no rule is offered for it: the person is still asked.
    """
    suggestions = []
    for raw in getattr(context, "suggestions", None) or []:
        try:
            wire = raw.to_dict() if hasattr(raw, "to_dict") else raw
            suggestion = PermissionSuggestion.from_wire(wire)
            problem = update_problem(suggestion)
            if problem is not None:
                raise ValueError(problem)
            suggestions.append(suggestion)
        except Exception as exc:
            log.warning("ignored a malformed permission suggestion from the CLI (%s); "
                        "the person is still asked", exc)
    return tuple(suggestions)


def request_from_context(tool_name: str, tool_input: dict[str, Any], context: Any, *,
                         info: SessionInfo, options: SessionOptions,
                         update_problem: Callable[[PermissionSuggestion], str | None],
                         project_settings_file: str | None) -> ApprovalRequest:
    """The request a session puts to the broker for one `can_use_tool` call."""
    return ApprovalRequest(
        session_id=info.session_id, session_name=info.name, backend=info.backend,
        tool_name=tool_name, tool_input=tool_input,
        title=getattr(context, "title", None),
        display_name=getattr(context, "display_name", None),
        description=getattr(context, "description", None),
        decision_reason=getattr(context, "decision_reason", None),
        blocked_path=getattr(context, "blocked_path", None),
        agent_id=getattr(context, "agent_id", None),
        tool_use_id=getattr(context, "tool_use_id", None),
        suggestions=suggestions_from_context(context, update_problem), cwd=options.cwd,
        add_dirs=tuple(options.add_dirs),
        project_settings_file=project_settings_file,
    )
