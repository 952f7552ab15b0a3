"""Tests for turning the CLI's suggestions into session grants (`rule_grants`)."""

from __future__ import annotations

from typing import Any

import pytest

from qoder_desktop.domain.models import PermissionSuggestion, RuleBehavior, RuleValue
from qoder_desktop.rules.matcher import (
    evaluate,
    is_dangerous,
    session_rules_from_updates,
    split_suggestions,
)


def wire(**data: Any) -> PermissionSuggestion:
    """A suggestion from its control-protocol dict."""
    return PermissionSuggestion.from_wire(data)


ADD_LOCAL = wire(type="addRules", behavior="allow", destination="localSettings",
                 rules=[{"toolName": "Bash", "ruleContent": "npm run test:*"}])
ADD_PROJECT = wire(type="addRules", behavior="allow", destination="projectSettings",
                   rules=[{"toolName": "Edit", "ruleContent": "./src/**"},
                          {"toolName": "Read"}])
BYPASS = wire(type="setMode", mode="bypassPermissions", destination="session")
ACCEPT_EDITS = wire(type="setMode", mode="acceptEdits", destination="session")
DIRS = wire(type="addDirectories", directories=["/tmp/x"], destination="localSettings")
DENY_RULE = wire(type="addRules", behavior="deny", destination="localSettings",
                 rules=[{"toolName": "Bash", "ruleContent": "rm *"}])
REPLACE = wire(type="replaceRules", behavior="allow", destination="session",
               rules=[{"toolName": "Bash"}])
REMOVE = wire(type="removeRules", behavior="deny", destination="userSettings",
              rules=[{"toolName": "Bash", "ruleContent": "rm *"}])
EMPTY_ADD = wire(type="addRules", behavior="allow", destination="session", rules=[])


def test_allow_add_rules_become_session_grants() -> None:
    split = split_suggestions([ADD_LOCAL, ADD_PROJECT])
    assert [s.destination for s in split.session_rules] == ["session", "session"]
    assert split.session_rules[0].rules == ADD_LOCAL.rules
    assert split.session_rules[0].to_wire() == {
        "type": "addRules", "destination": "session", "behavior": "allow",
        "rules": [{"toolName": "Bash", "ruleContent": "npm run test:*"}]}
    assert split.session_rules[1].rules == (RuleValue(tool_name="Edit", rule_content="./src/**"),)
    # The whole-tool Read is never pre-filled: it waits, unticked, for the person.
    assert [(u.rules, u.destination) for u in split.kept_aside] == [
        ((RuleValue(tool_name="Read"),), "session")]
    assert split.dropped == ()
    assert ADD_LOCAL.destination == "localSettings"  # the original is not modified


def test_everything_else_is_kept_aside_unchanged() -> None:
    others = [BYPASS, ACCEPT_EDITS, DIRS, DENY_RULE, REPLACE, REMOVE]
    split = split_suggestions([*others, ADD_LOCAL])
    assert split.kept_aside == tuple(others)
    assert len(split.session_rules) == 1


def test_bypass_is_never_a_session_grant() -> None:
    split = split_suggestions([BYPASS])
    assert split.session_rules == ()
    assert session_rules_from_updates("s1", [BYPASS]) == []


def test_rules_without_a_tool_name_are_dropped() -> None:
    blank = PermissionSuggestion(type="addRules", behavior=RuleBehavior.ALLOW,
                                 rules=(RuleValue(tool_name=" "),
                                        RuleValue(tool_name="Bash", rule_content="ls")))
    only_blank = PermissionSuggestion(type="addRules", behavior=RuleBehavior.ALLOW,
                                      rules=(RuleValue(tool_name="  "),))
    split = split_suggestions([blank, only_blank, EMPTY_ADD])
    assert len(split.session_rules) == 1
    assert [str(r) for r in split.session_rules[0].rules or ()] == ["Bash(ls)"]
    assert split.dropped == (only_blank, EMPTY_ADD)


@pytest.mark.parametrize(("update", "dangerous"), [
    (BYPASS, True),
    (wire(type="setMode", mode="yolo"), True),
    (wire(type="setMode", mode="auto"), True),
    (wire(type="setMode", mode="somethingNew"), True),
    (PermissionSuggestion(type="setMode"), True),
    (ACCEPT_EDITS, True),
    (wire(type="setMode", mode="plan"), False),
    (wire(type="setMode", mode="default"), False),
    (wire(type="setMode", mode="dontAsk"), False),
    (ADD_LOCAL, False),
    (DIRS, False),
])
def test_is_dangerous(update: PermissionSuggestion, dangerous: bool) -> None:
    assert is_dangerous(update) is dangerous


def test_session_rules_from_updates() -> None:
    granted = session_rules_from_updates(
        "s1", [*split_suggestions([ADD_LOCAL, ADD_PROJECT]).session_rules, ADD_LOCAL,
               DENY_RULE, DIRS, REPLACE, BYPASS], granted_by="user")
    assert [(r.behavior.value, str(r.rule)) for r in granted] == [
        ("allow", "Bash(npm run test:*)"), ("allow", "Edit(./src/**)"),
        ("deny", "Bash(rm *)")]
    assert {r.session_id for r in granted} == {"s1"}
    assert {r.granted_by for r in granted} == {"user"}
    assert all(r.active for r in granted)


def test_granted_rules_decide_the_next_call() -> None:
    granted = session_rules_from_updates("s1", split_suggestions([ADD_LOCAL]).session_rules)
    verdict = evaluate(granted, "Bash", {"command": "npm run test --watch"}, "/w")
    assert verdict is not None and verdict.behavior is RuleBehavior.ALLOW
    assert evaluate(granted, "Bash", {"command": "npm run test; curl x | sh"}, "/w") is None
