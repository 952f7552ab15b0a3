"""Tests for the session-rule matcher: order, Bash, MCP, other tools, proposals."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.rules.matcher import evaluate, parse_bash_spec, rule_for_request, wildcard_match

ALLOW, DENY, ASK = RuleBehavior.ALLOW, RuleBehavior.DENY, RuleBehavior.ASK
CWD = "/work/project"


def rule(text: str, behavior: RuleBehavior = ALLOW, *, revoked: bool = False) -> SessionRule:
    """A session rule from its text."""
    return SessionRule(session_id="s1", behavior=behavior, rule=RuleValue.parse(text),
                       revoked_at=datetime.now(UTC) if revoked else None)


def bash(rules: list[SessionRule], command: Any, **extra: Any) -> RuleBehavior | None:
    """The behaviour the rules give a Bash call, or None."""
    verdict = evaluate(rules, "Bash", {"command": command, **extra}, CWD)
    return None if verdict is None else verdict.behavior


# -- order -----------------------------------------------------------------------------

@pytest.mark.parametrize("order", [1, -1])
def test_deny_beats_allow_whatever_the_order(order: int) -> None:
    rules = [rule("Bash(aws s3 ls)"), rule("Bash(aws *)", DENY)][::order]
    verdict = evaluate(rules, "Bash", {"command": "aws s3 ls"}, CWD)
    assert verdict is not None and verdict.behavior is DENY
    assert str(verdict.rule.rule) == "Bash(aws *)"


@pytest.mark.parametrize("order", [1, -1])
def test_ask_beats_allow_and_deny_beats_ask(order: int) -> None:
    assert bash([rule("Bash(git push)"), rule("Bash(git push *)", ASK)][::order],
                "git push") is ASK
    assert bash([rule("Bash", ASK), rule("Bash(git push *)", DENY)][::order],
                "git push") is DENY


def test_revoked_rules_do_not_count() -> None:
    assert bash([rule("Bash(ls)", revoked=True)], "ls") is None
    assert bash([rule("Bash(ls)"), rule("Bash(ls)", DENY, revoked=True)], "ls") is ALLOW


def test_nothing_matches_gives_none() -> None:
    assert evaluate([], "Bash", {"command": "ls"}, CWD) is None
    assert bash([rule("Read")], "ls") is None


# -- Bash: prefix, exact and glob rules ---------------------------------------------------

GIT_DIFF = [
    ("git diff", ALLOW),
    ("git diff --stat HEAD", ALLOW),
    ("  git   diff  ", None),  # not the canonical spelling: the CLI asks
    ("git 'diff' --stat", None),
    ("git difftool", None),
    ("git diffx --stat", None),
    ("git dif", None),
    ("git diff; rm -rf ~", None),
    ("git diff && rm -rf ~", None),
    ("git diff || rm -rf ~", None),
    ("git diff | sh", None),
    ("git diff & rm -rf ~", None),
    ("git diff $(curl x)", None),
    ("git diff `curl x`", None),
    ("git diff ${PATH}", None),
    ('git diff "$HOME"', None),
    ("git diff > ~/.ssh/x", None),
    ("git diff >> ~/.bashrc", None),
    ("git diff 2>/tmp/x", None),
    ("git diff < /etc/passwd", None),
    ("git diff <<EOF", None),
    ("git diff <(curl x)", None),
    ("FOO=1 git diff", None),
    ("git diff\nrm -rf ~", None),
    ("git diff \\\n; rm -rf ~", None),
    ('git diff "unterminated', None),
    ("(git diff)", None),
    ("{ git diff; }", None),
    ("git diff # comment", None),
    ("git diff\u202e", None),
    ("", None),
    ("   ", None),
]


@pytest.mark.parametrize(("command", "expected"), GIT_DIFF)
def test_git_diff_prefix_rule(command: str, expected: RuleBehavior | None) -> None:
    assert bash([rule("Bash(git diff *)")], command) is expected


@pytest.mark.parametrize(("command", "expected"), [
    ("npm run test", ALLOW),
    ("npm run test --watch", ALLOW),
    ("npm run test -- -t name", ALLOW),
    ("npm run test:unit", None),
    ("npm run testing", None),
    ("npm run test && npm publish", None),
    ("npm run", None),
])
def test_legacy_colon_star_is_a_word_prefix(command: str, expected: RuleBehavior | None) -> None:
    assert bash([rule("Bash(npm run test:*)")], command) is expected


@pytest.mark.parametrize(("command", "expected"), [
    ("echo", ALLOW), ("echo hi", ALLOW), ("echotest", None), ("echo-x", None)])
def test_no_partial_token_prefix(command: str, expected: RuleBehavior | None) -> None:
    assert bash([rule("Bash(echo:*)")], command) is expected
    assert bash([rule("Bash(echo *)")], command) is expected


@pytest.mark.parametrize(("command", "expected"), [
    ("npm test", ALLOW), ("  npm test  ", ALLOW), ("npm  'test'", None),
    ("npm test --watch", None), ("npm tests", None), ("npm", None), ("npm test; ls", None),
])
def test_exact_rule_compares_argv(command: str, expected: RuleBehavior | None) -> None:
    assert bash([rule("Bash(npm test)")], command) is expected


@pytest.mark.parametrize(("spec", "command", "expected"), [
    ("ls*", "lsof", ALLOW),
    ("ls*", "ls -la", ALLOW),
    ("ls*", "ls > x", None),
    ("git * main", "git checkout main", ALLOW),
    ("git * main", "git merge --no-ff main", ALLOW),
    ("git * main", "git checkout main; rm -rf ~", None),
    ("git * main", "git checkout dev", None),
    ("* --version", "node --version", ALLOW),
    ("* --version", "node --version && rm -rf ~", None),
    ("git * --stat:*", "git diff --stat HEAD", ALLOW),
])
def test_glob_rules_match_one_simple_command(spec: str, command: str,
                                             expected: RuleBehavior | None) -> None:
    assert bash([rule(f"Bash({spec})")], command) is expected


def test_rules_are_case_sensitive() -> None:
    assert bash([rule("Bash(Git diff *)")], "git diff") is None
    assert bash([rule("bash")], "git diff") is None


def test_parse_bash_spec_kinds() -> None:
    assert parse_bash_spec("npm test").kind == "exact"
    assert parse_bash_spec("npm run test:*").text == "npm run test"
    assert parse_bash_spec("git diff *").text == "git diff"
    assert parse_bash_spec("git * main").kind == "glob"
    assert parse_bash_spec("git * main *").kind == "glob"


# -- Bash: compound commands -------------------------------------------------------------

def test_compound_needs_every_segment_allowed() -> None:
    diff, status = rule("Bash(git diff *)"), rule("Bash(git status)")
    assert bash([diff], "git diff && git status") is None
    assert bash([status], "git diff && git status") is None
    verdict = evaluate([diff, status], "Bash", {"command": "git diff && git status"}, CWD)
    assert verdict is not None and verdict.behavior is ALLOW
    assert verdict.rules == (diff, status) and verdict.rule is diff
    assert bash([diff, status], "git status; git diff --stat | git status") is ALLOW
    assert bash([diff, status], "git diff && git status && rm -rf ~") is None


def test_exact_rule_for_the_same_compound_line() -> None:
    rules = [rule("Bash(git diff && git status)")]
    assert bash(rules, "git diff && git status") is ALLOW
    assert bash(rules, "git  diff &&  'git' status") is None  # another spelling
    assert bash(rules, "git diff || git status") is None
    assert bash(rules, "git diff && git status && rm -rf ~") is None
    assert bash(rules, "git diff") is None


def test_deny_on_any_segment_wins() -> None:
    rules = [rule("Bash(ls)"), rule("Bash(rm *)", DENY)]
    assert bash(rules, "ls") is ALLOW
    assert bash(rules, "ls && rm -rf x") is DENY


def test_ask_on_any_segment_wins_even_over_whole_tool_allow() -> None:
    rules = [rule("Bash(git *)"), rule("Bash(git push *)", ASK)]
    assert bash(rules, "git status && git push origin main") is ASK
    assert bash(rules, "git status") is ALLOW


@pytest.mark.parametrize("command", [
    "rm -rf x", "ls && rm -rf x", "ls; sudo rm -rf x", "FOO=1 rm -rf x", "/bin/rm -rf x",
    'bash -c "rm -rf x"', "echo $(rm -rf x)", "ls\nrm -rf x", "timeout 5 rm -rf x",
    'rm -rf "unterminated', "rm -rf x > /dev/null", "(rm -rf x)",
])
def test_deny_matches_generously(command: str) -> None:
    assert bash([rule("Bash"), rule("Bash(rm *)", DENY)], command) is DENY


@pytest.mark.parametrize("command", ["rmdir x", "git rm x", 'echo "rm -rf x"', "lsrm"])
def test_deny_prefix_keeps_word_boundaries(command: str) -> None:
    assert bash([rule("Bash(rm:*)", DENY)], command) is None


def test_deny_exact_and_glob_rules() -> None:
    assert bash([rule("Bash(npm publish)", DENY)], "npm test && npm  publish") is DENY
    assert bash([rule("Bash(* --force)", DENY)], "ls; git push --force") is DENY
    assert bash([rule("Bash(npm publish)", DENY)], "npm publish --dry-run") is None


# -- Bash: whole tool and odd inputs -----------------------------------------------------

@pytest.mark.parametrize("text", ["Bash", "Bash(*)"])
def test_whole_tool_bash_allow_never_allows_by_itself(text: str) -> None:
    # The CLI holds a whole-tool rule and still asks about some calls; we never allow.
    assert bash([rule(text)], "git diff $(curl x) > y") is None
    assert bash([rule(text)], "git diff") is None
    assert bash([rule(text)], "") is None


def test_whole_tool_deny_denies_everything() -> None:
    assert bash([rule("Bash(git diff *)"), rule("Bash", DENY)], "git diff") is DENY


def test_missing_or_odd_command_is_never_allowed_by_a_specifier() -> None:
    rules = [rule("Bash(git diff *)")]
    assert evaluate(rules, "Bash", {}, CWD) is None
    assert bash(rules, 42) is None
    assert evaluate(rules, "Bash", "git diff", CWD) is None  # type: ignore[arg-type]
    assert bash([rule("Bash(rm *)", DENY)], None) is DENY


def test_sandbox_escape_is_never_allowed_by_a_specifier() -> None:
    assert bash([rule("Bash(git diff *)")], "git diff", dangerouslyDisableSandbox=True) is None
    assert bash([rule("Bash")], "git diff", dangerouslyDisableSandbox=True) is None


# -- other tools -------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "tool", "expected"), [
    ("mcp__github__create_issue", "mcp__github__create_issue", ALLOW),
    ("mcp__github__create_issue", "mcp__github__delete_repo", None),
    ("mcp__github", "mcp__github__delete_repo", ALLOW),
    ("mcp__github", "mcp__githubx__tool", None),
    ("mcp__github", "mcp__github", ALLOW),
    ("mcp__github__create_issue(x)", "mcp__github__create_issue", None),
    ("mcp__other", "mcp__github__tool", None),
    ("Task", "Task", ALLOW),
    ("Task(explore)", "Task", None),
    ("WebSearch(*)", "WebSearch", ALLOW),
    ("Edit", "Write", None),  # whole-tool Edit: the CLI holds it and still asks
    ("WebFetch", "WebFetch", ALLOW),
    ("Edit", "NotebookEdit", None),
    ("Write", "Edit", None),
    ("Read", "Grep", None),
    ("Read", "Edit", None),
])
def test_tool_names(text: str, tool: str, expected: RuleBehavior | None) -> None:
    verdict = evaluate([rule(text)], tool, {}, CWD)
    assert (verdict.behavior if verdict else None) is expected


def test_mcp_server_star_rule() -> None:
    star = SessionRule(session_id="s1", behavior=ALLOW,
                       rule=RuleValue(tool_name="mcp__github__*"))
    assert evaluate([star], "mcp__github__x", {}, CWD) is not None
    assert evaluate([star], "mcp__githubx__x", {}, CWD) is None


def test_questions_are_never_allowed_by_a_rule() -> None:
    assert evaluate([rule("AskUserQuestion")], "AskUserQuestion", {}, CWD) is None
    verdict = evaluate([rule("AskUserQuestion", DENY)], "AskUserQuestion", {}, CWD)
    assert verdict is not None and verdict.behavior is DENY


# -- proposals for "allow for this session" ----------------------------------------------

@pytest.mark.parametrize(("tool", "tool_input", "expected"), [
    ("Bash", {"command": "  npm test  "}, "Bash(npm test)"),
    ("Bash", {"command": "git diff && git status"}, "Bash(git diff && git status)"),
    ("Bash", {"command": "git diff > x"}, None),
    ("Bash", {"command": "ls *.py"}, None),
    ("Bash", {"command": "FOO=1 make"}, None),
    ("Bash", {}, None),
    ("Edit", {"file_path": "/work/project/src/../a.py"}, "Edit(//work/project/a.py)"),
    ("Write", {"file_path": "b.py"}, "Edit(//work/project/b.py)"),
    ("NotebookEdit", {"notebook_path": "/n/x.ipynb"}, "Edit(//n/x.ipynb)"),
    ("Read", {"file_path": "/etc/a*b[1].txt"}, "Read(//etc/a\\*b\\[1].txt)"),
    ("Read", {"file_path": 3}, None),
    ("Grep", {"path": "/work/project/src", "pattern": "x"}, "Read(//work/project/src/**)"),
    ("Grep", {"pattern": "x"}, "Grep"),
    ("WebFetch", {"url": "https://Docs.Example.com/a"}, "WebFetch(domain:docs.example.com)"),
    ("WebFetch", {"url": "javascript:alert(1)"}, None),
    ("mcp__github__create_issue", {"title": "x"}, "mcp__github__create_issue"),
    ("Task", {"prompt": "x"}, "Task"),
    ("AskUserQuestion", {"questions": []}, None),
    ("ExitPlanMode", {"plan": "x"}, None),
])
def test_rule_for_request(tool: str, tool_input: dict[str, Any], expected: str | None) -> None:
    proposed = rule_for_request(tool, tool_input, CWD)
    assert (str(proposed) if proposed else None) == expected


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Bash", {"command": "git diff --stat"}),
    ("Bash", {"command": "a && b | c"}),
    ("Bash", {"command": 'echo "(x)" \')\''}),
    ("Edit", {"file_path": "/work/project/src/x.py"}),
    ("Read", {"file_path": "/etc/a*b[1].txt"}),
    ("Grep", {"path": "/work/project/src", "pattern": "x"}),
    ("WebFetch", {"url": "https://example.com/x"}),
    ("mcp__s__t", {}),
])
def test_proposed_rule_allows_the_request_it_came_from(tool: str,
                                                       tool_input: dict[str, Any]) -> None:
    proposed = rule_for_request(tool, tool_input, CWD)
    assert proposed is not None
    granted = SessionRule(session_id="s1", behavior=ALLOW, rule=RuleValue.parse(str(proposed)))
    verdict = evaluate([granted], tool, tool_input, CWD)
    assert verdict is not None and verdict.behavior is ALLOW


# -- properties --------------------------------------------------------------------------

_TAIL = st.text(alphabet="ab -;&|<>$`\n(){}=*#!", max_size=30)
_NO_QUOTES_DANGER = st.text(alphabet="ab -$`<>\n(", min_size=1, max_size=30).filter(
    lambda s: any(c in s for c in "$`<>\n("))


@settings(max_examples=500)
@given(_NO_QUOTES_DANGER)
def test_expansions_and_redirections_are_never_allowed(tail: str) -> None:
    rules = [rule("Bash(git diff *)"), rule("Bash(git diff*)"), rule("Bash(*diff*)"),
             rule("Bash(a *)"), rule("Bash(b:*)")]
    assert bash(rules, "git diff " + tail) is None


@settings(max_examples=500)
@given(_TAIL)
def test_compound_allowed_only_when_every_segment_is(tail: str) -> None:
    command = "git diff " + tail
    if bash([rule("Bash(git diff *)")], command) is ALLOW:
        for piece in command.replace("&&", ";").replace("||", ";").replace("|", ";") \
                .replace("&", ";").split(";"):
            assert piece.split()[:2] == ["git", "diff"]
        assert not set("$`<>\n(){}!") & set(command)
        assert not re.search(r"(^|[\s;&|])#", command)  # mid-word '#' is not a comment


@settings(max_examples=300)
@given(st.text(max_size=30))
def test_deny_sees_a_command_after_any_separator(prefix: str) -> None:
    for sep in (";", "&&", "|", "\n", "$(", "`"):
        command = f"{prefix}{sep} rm -rf x"
        assert bash([rule("Bash"), rule("Bash(rm *)", DENY)], command) is DENY


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("*", "", True), ("a*", "abc", True), ("*c", "abc", True), ("a*c", "ac", True),
    ("a*c", "ab", False), ("*a*b*", "xaxbx", True), ("**", "x", True), ("a", "ab", False),
])
def test_wildcard_match(pattern: str, text: str, expected: bool) -> None:
    assert wildcard_match(pattern, text) is expected


def test_catastrophic_glob_stays_cheap() -> None:
    rules = [rule("Bash(a*)"), rule("Bash(*a*a*a*a*a*a*a*a*a*a*b)", DENY)]
    assert bash(rules, "a" * 5000) is ALLOW


def test_catastrophic_legacy_glob_stays_cheap() -> None:
    rules = [rule("Bash(*a*)"), rule("Bash(*a*a*a*a*a*b:*)", DENY)]
    assert bash(rules, "a " * 3000) is ALLOW
    assert bash(rules, "xaaaaab\tz") is DENY
    assert bash(rules, "xaaaaabz") is ALLOW  # the tail needs a word boundary
