"""Realistic approval requests, shaped like the ones the Claude Code CLI sends."""

from __future__ import annotations

from typing import Any

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)


def bash_request(session_id: str, cwd: str, command: str = "touch f.txt",
                 session_name: str = "bench") -> ApprovalRequest:
    """A Bash call with the CLI's usual "don't ask again" suggestion (localSettings)."""
    suggestion = PermissionSuggestion(type="addRules", rules=(RuleValue.parse(f"Bash({command})"),),
                                      behavior=RuleBehavior.ALLOW, destination="localSettings")
    return ApprovalRequest(
        session_id=session_id, session_name=session_name, backend=Backend.CLAUDE,
        tool_name="Bash", tool_input={"command": command, "description": "Create an empty file"},
        tool_use_id="toolu_bench", suggestions=(suggestion,), cwd=cwd)


def question_input() -> dict[str, Any]:
    """The first AskUserQuestion input of the shipped `question` scenario (with previews)."""
    from qoder_desktop.scripted_model.scenario import load_builtin_scenario

    return dict(load_builtin_scenario("question").steps[0].input or {})


def question_request(session_id: str, cwd: str) -> ApprovalRequest:
    """An AskUserQuestion request whose options carry markdown previews."""
    return ApprovalRequest(session_id=session_id, session_name="bench", backend=Backend.CLAUDE,
                           tool_name="AskUserQuestion", tool_input=question_input(), cwd=cwd)
