"""A way in's permission prompt becomes our request: the session's folders and host come
from the session (never from the prompt), and a malformed suggestion of the CLI only
means no rule is offered for it; the person is still asked."""

from __future__ import annotations

import logging

import pytest
from claude_agent_sdk import PermissionUpdate
from claude_agent_sdk.types import PermissionRuleValue

from qoder_desktop.approval.calls import (
    SessionRef,
    ToolCall,
    build_request,
    parse_suggestions,
    wire_problem,
)
from qoder_desktop.domain.models import Backend, PermissionSuggestion, RuleValue

SESSION = SessionRef("s-1", "demo", Backend.CLAUDE, cwd="/work/proj", add_dirs=("/work/lib",),
                     project_settings_file="/work/proj/.claude/settings.local.json",
                     host="build-box")
ADD_LS = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}],
          "behavior": "allow", "destination": "session"}


def test_the_request_carries_the_call_and_the_sessions_own_folders() -> None:
    call = ToolCall("Bash", {"command": "ls"}, tool_use_id="toolu_1", suggestions=[ADD_LS],
                    title="Run ls?", decision_reason="not in the allow list", agent_id="sub-1")
    request = build_request(SESSION, call)
    assert (request.session_id, request.session_name, request.backend) == (
        "s-1", "demo", Backend.CLAUDE)
    assert (request.tool_name, request.tool_input, request.tool_use_id) == (
        "Bash", {"command": "ls"}, "toolu_1")
    assert (request.cwd, request.add_dirs, request.host) == ("/work/proj", ("/work/lib",),
                                                            "build-box")
    assert request.project_settings_file == "/work/proj/.claude/settings.local.json"
    assert (request.title, request.decision_reason, request.agent_id) == (
        "Run ls?", "not in the allow list", "sub-1")
    assert request.suggestions[0].rules == (RuleValue.parse("Bash(ls:*)"),)


def test_sdk_suggestion_objects_are_read_as_the_wire_dicts() -> None:
    sdk_update = PermissionUpdate(type="addRules", behavior="allow", destination="session",
                                  rules=[PermissionRuleValue(tool_name="Bash",
                                                             rule_content="ls:*")])
    assert parse_suggestions([sdk_update]) == parse_suggestions([ADD_LS])


def test_malformed_suggestions_are_dropped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="qoder_desktop.approval.calls")
    raw = [ADD_LS, {"type": "addRules", "destination": "session"}, "not an update",
           {"type": "setMode", "destination": "session"}]
    kept = parse_suggestions(raw)
    assert [update.type for update in kept] == ["addRules"]
    assert caplog.text.count("the person is still asked") == 3


def test_no_suggestions_and_a_prompt_whose_suggestions_are_no_list() -> None:
    assert parse_suggestions(None) == ()
    assert build_request(SESSION, ToolCall("Bash", {"command": "ls"})).suggestions == ()
    with pytest.raises(ValueError, match="must be a list"):
        parse_suggestions({"type": "addRules"})


def test_a_way_in_can_add_its_own_check() -> None:
    no_modes = lambda update: "no modes here" if update.type == "setMode" else None  # noqa: E731
    raw = [ADD_LS, {"type": "setMode", "mode": "plan", "destination": "session"}]
    assert [u.type for u in parse_suggestions(raw, no_modes)] == ["addRules"]
    assert len(parse_suggestions(raw)) == 2


@pytest.mark.parametrize(("update", "problem"), [
    (PermissionSuggestion(type="addRules", destination="session"),
     "an addRules update without rules or behavior"),
    (PermissionSuggestion(type="setMode", destination="session"), "a setMode update without mode"),
    (PermissionSuggestion(type="addDirectories", destination="session"),
     "an addDirectories update without directories"),
    (PermissionSuggestion(type="setMode", mode="plan", destination="session"), None),
])
def test_the_clis_own_refusals_are_named(update: PermissionSuggestion, problem: str | None
                                         ) -> None:
    assert wire_problem(update) == problem
