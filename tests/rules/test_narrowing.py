"""`is_narrower`: an edited rule is narrower only if the original matched all it matches."""

from __future__ import annotations

import pytest

from qoder_desktop.domain.models import PermissionSuggestion, RuleBehavior, RuleValue
from qoder_desktop.rules.grants import is_whole_tool, split_suggestions
from qoder_desktop.rules.narrowing import is_narrower


@pytest.mark.parametrize(("original", "edited", "expected"), [
    ("Edit(//home/u/src/**)", "Edit(//home/u/src/**)", True),
    ("Edit(//home/u/src/**)", "Edit(//home/u/src/pkg/**)", True),
    ("Edit(//home/u/src/**)", "Edit(//home/u/src/a.py)", True),
    ("Edit(//home/u/src/**)", "Edit(//home/u/src/*.py)", True),
    ("Edit(//home/u/src/**)", "Edit(//home/u/src-evil/**)", False),
    ("Edit(//home/u/src/**)", "Edit(//home/u/src/../x)", False),
    ("Edit(//home/u/src/**)", "Edit(//home/u/**)", False),
    ("Edit(//home/u/src/**)", "Edit(*.py)", False),
    ("Edit(//home/u/src/**)", "Write(//home/u/src/**)", False),
    ("Edit(//home/u/src/**)", "Edit", False),
    ("Edit(//home/u/src/a.py)", "Edit(//home/u/src/a.py.bak)", False),
    ("Edit(//home/u/src/*.py)", "Edit(//home/u/src/a.py)", False),  # unsure: False
    ("Edit(./src/**)", "Edit(./src/x/**)", True),
    ("Edit(./src/**)", "Edit(src/x/y)", True),
    ("Edit(./src/**)", "Edit(~/src/**)", False),
    ("Read(~/docs)", "Read(~/docs/a.md)", True),
    ("Bash(git diff *)", "Bash(git diff --stat *)", True),
    ("Bash(git diff *)", "Bash(git diff --stat)", True),
    ("Bash(git diff *)", "Bash(git diff)", True),
    ("Bash(git diff *)", "Bash(git diffx *)", False),
    ("Bash(git diff *)", "Bash(git diffx)", False),
    ("Bash(git diff *)", "Bash(git *)", False),
    ("Bash(git diff *)", "Bash(git diff*)", False),
    ("Bash(git diff *)", "Bash(git diff --stat*)", True),
    ("Bash(git diff *)", "Bash(git  diff --stat)", False),
    ("Bash(git diff *)", "Bash", False),
    ("Bash(npm run test:*)", "Bash(npm run test:unit)", False),
    ("Bash(npm run test:*)", "Bash(npm run test --watch)", True),
    ("Bash(npm test)", "Bash(npm test)", True),
    ("Bash(npm test)", "Bash(npm test --x)", False),
    ("Bash(ls*)", "Bash(lsof)", True),
    ("Bash(ls*)", "Bash(lsof *)", True),
    ("Bash(ls*)", "Bash(cat *)", False),
    ("Bash(git * main)", "Bash(git push origin main)", True),
    ("Bash(git * main)", "Bash(git push *)", False),
    ("Bash", "Bash(rm -rf /)", True),
    ("WebFetch(domain:*.example.com)", "WebFetch(domain:api.example.com)", True),
    ("WebFetch(domain:*.example.com)", "WebFetch(domain:example.com.evil)", False),
    ("WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)", False),
    ("mcp__github", "mcp__github__create_issue", True),
    ("mcp__github", "mcp__githubx__create_issue", False),
    ("mcp__github__create_issue", "mcp__github", False),
    ("Task(explore)", "Task(other)", False),
])
def test_is_narrower(original: str, edited: str, expected: bool) -> None:
    assert is_narrower(RuleValue.parse(original), RuleValue.parse(edited)) is expected


@pytest.mark.parametrize(("text", "whole"), [
    ("Bash", True), ("Bash(*)", True), ("Edit", True), ("mcp__srv", True),
    ("mcp__srv__tool", False), ("Bash(ls)", False),
    ("Edit(./**)", False),
])
def test_is_whole_tool(text: str, whole: bool) -> None:
    assert is_whole_tool(RuleValue.parse(text)) is whole


def test_whole_tool_suggestions_are_kept_aside() -> None:
    update = PermissionSuggestion(
        type="addRules", behavior=RuleBehavior.ALLOW, destination="localSettings",
        rules=(RuleValue.parse("Bash"), RuleValue.parse("Bash(git status)")))
    split = split_suggestions([update])
    assert [u.rules for u in split.session_rules] == [(RuleValue.parse("Bash(git status)"),)]
    assert [(u.rules, u.destination) for u in split.kept_aside] == [
        ((RuleValue.parse("Bash"),), "session")]
