"""Our own session-rule matcher, which fails closed.

Rules use Claude Code's syntax, `Tool` or `Tool(specifier)`, and are evaluated in the
order deny, ask, allow: the first behaviour with a matching rule decides, however
specific an allow rule is. Deny and ask rules match generously (any segment of a shell
command, any reading of a path or URL); allow rules match strictly.

Semantics, in short (see the tests for the full tables):

- A whole-tool rule (`Bash`, `Edit`, `mcp__server`, and `Tool(*)` for tools without
  path specifiers) matches every call of that tool. A whole-tool *allow* rule is what
  the user granted, so it allows even commands that the shell analysis rejects. The
  one exception is `AskUserQuestion`, which no rule ever allows (an auto-allowed
  question would be answered with nothing).
- Bash specifiers: `Bash(npm test)` is exact (same argv after quote removal);
  `Bash(git diff *)` (a single trailing ` *`) and the legacy `Bash(npm run test:*)`
  are word-prefix rules: `npm run test:*` allows `npm run test` and
  `npm run test --watch`, not `npm run test:unit` or `npm run testing`; any other `*`
  is a glob over one simple command's text (`Bash(ls*)` matches `lsof`).
  A specifier allow never applies unless `shell_words.analyze` fully understands the
  line (no expansions, substitutions, redirections, assignments, newlines, ...), and
  every simple command of a compound line must be allowed on its own, possibly by
  different rules. The only exception is an exact rule whose text parses to the very
  same compound structure (same argv per command, same operators): that is the exact
  command the user approved. A call with `dangerouslyDisableSandbox` set is never
  allowed by a specifier rule.
- Path specifiers (Read, Edit and the other edit tools): see `rule_paths`. An `Edit`
  rule covers Edit, Write, MultiEdit and NotebookEdit; a `Read` rule covers Read,
  NotebookRead and, best effort, Glob, Grep and LS (their `path` is a folder read
  recursively; a Glob pattern that is absolute or contains `..` is never allowed).
- `WebFetch(domain:...)`: see `rule_paths.domain_rule_matches`.
- MCP: `mcp__server__tool` exactly; `mcp__server` or `mcp__server__*` for the server.
- Any other tool with a specifier never matches. Everything is case-sensitive except
  host names.

Turning the CLI's suggestions into grants lives in `rule_grants` and is re-exported
here (`split_suggestions`, `is_dangerous`, `session_rules_from_updates`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from qoder_desktop.domain.models import (
    PLAN_TOOL,
    QUESTION_TOOL,
    RuleBehavior,
    RuleValue,
    SessionRule,
)
from qoder_desktop.rules import paths as rule_paths
from qoder_desktop.rules.grants import (
    SuggestionSplit,
    is_dangerous,
    session_rules_from_updates,
    split_suggestions,
)
from qoder_desktop.shell import candidates as shell_candidates
from qoder_desktop.shell import words as shell_words
from qoder_desktop.shell.words import ShellAnalysis, SimpleCommand

__all__ = [
    "RuleVerdict", "SuggestionSplit", "bash_allows_command", "bash_matches_generously",
    "evaluate", "is_dangerous", "parse_bash_spec", "rule_for_request",
    "session_rules_from_updates", "split_suggestions", "wildcard_match",
]

BASH_TOOL = "Bash"
WEBFETCH_TOOL = "WebFetch"
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "NotebookRead"})
SEARCH_TOOLS = frozenset({"Glob", "Grep", "LS"})
PATH_RULE_TOOLS = EDIT_TOOLS | READ_TOOLS
#: Which input field holds the path, per tool.
PATH_KEYS: Mapping[str, str] = {
    "Read": "file_path", "Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path", "NotebookRead": "notebook_path",
    "Glob": "path", "Grep": "path", "LS": "path",
}
_BOUNDARY = frozenset(" \t\n\r;&|<>()$`'\"\\{}!#*?[]~")


@dataclass(frozen=True)
class RuleVerdict:
    """What the session rules decided about one call.

    Attributes:
        behavior: allow, deny or ask.
        rule: the rule that decided (for a compound command, the first of `rules`).
        rules: every rule that took part: for a compound command allowed segment by
            segment, one rule per distinct rule used, in order.
    """

    behavior: RuleBehavior
    rule: SessionRule
    rules: tuple[SessionRule, ...]


@dataclass(frozen=True)
class _BashSpec:
    """A parsed Bash specifier.

    Attributes:
        kind: "exact", "prefix" or "glob".
        text: the exact command, the prefix, or the glob pattern.
        optional_tail: for a legacy `...:*` glob, the pattern may also be followed by
            whitespace and anything.
    """

    kind: str
    text: str
    optional_tail: bool = False

    def glob_matches(self, text: str) -> bool:
        """Match a glob spec against `text` (`*` is any run of characters)."""
        if wildcard_match(self.text, text):
            return True
        return self.optional_tail and wildcard_match(self.text + " *",
                                                     text.replace("\t", " "))


def wildcard_match(pattern: str, text: str) -> bool:
    """Match `text` against `pattern` where `*` is any run of characters.

    Linear backtracking over the last star (O(len(pattern) * len(text)) at worst), so a
    pattern like `*a*a*a*b` cannot blow up on a long command the way a regex could.
    """
    p = t = 0
    star, mark = -1, 0
    while t < len(text):
        if p < len(pattern) and pattern[p] == "*":
            star, mark = p, t
            p += 1
        elif p < len(pattern) and pattern[p] == text[t]:
            p += 1
            t += 1
        elif star >= 0:
            p, mark = star + 1, mark + 1
            t = mark
        else:
            return False
    return all(ch == "*" for ch in pattern[p:])


@functools.lru_cache(maxsize=1024)
def parse_bash_spec(content: str) -> _BashSpec:
    """Classify a Bash specifier as exact, word-prefix or glob (cached: rules repeat)."""
    if content.endswith(":*"):
        base = content[:-2]
        if "*" not in base:
            return _BashSpec("prefix", base.strip())
        return _BashSpec("glob", base, optional_tail=True)
    if content.endswith(" *") and content.count("*") == 1:
        return _BashSpec("prefix", content[:-2].strip())
    if "*" in content:
        return _BashSpec("glob", content)
    return _BashSpec("exact", content.strip())


def _one_command(text: str) -> SimpleCommand | None:
    analysis = shell_words.analyze(text)
    if analysis.ok and len(analysis.commands) == 1:
        return analysis.commands[0]
    return None


def bash_allows_command(content: str, command: SimpleCommand) -> bool:
    """Strict match of a Bash specifier against one fully parsed simple command."""
    spec = parse_bash_spec(content)
    if spec.kind == "glob":
        return spec.glob_matches(command.text)
    parsed = _one_command(spec.text)
    if parsed is None:
        return False
    if spec.kind == "exact":
        return parsed.words == command.words
    return command.words[:len(parsed.words)] == parsed.words


def _raw_prefix(text: str, prefix: str) -> bool:
    if not prefix:
        return True
    return text == prefix or (text.startswith(prefix) and text[len(prefix)] in _BOUNDARY)


def bash_matches_generously(content: str, text: str, words: tuple[str, ...]) -> bool:
    """Deny/ask match of a Bash specifier against one candidate (see `deny_candidates`)."""
    spec = parse_bash_spec(content)
    if spec.kind == "glob":
        return spec.glob_matches(text) or spec.glob_matches(" ".join(words))
    rule_words = shell_candidates.lenient_words(spec.text)
    if spec.kind == "exact":
        return text == spec.text or (bool(rule_words) and words == rule_words)
    if rule_words and words[:len(rule_words)] == rule_words:
        return True
    return _raw_prefix(text, spec.text)


class _Call:
    """One tool call under evaluation; the shell analysis is computed once."""

    def __init__(self, tool_name: str, tool_input: Any, cwd: str) -> None:
        self.tool = tool_name
        self.input: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
        self.cwd = cwd or "."

    @functools.cached_property
    def command(self) -> str | None:
        value = self.input.get("command")
        return value if isinstance(value, str) else None

    @functools.cached_property
    def analysis(self) -> ShellAnalysis:
        return shell_words.analyze(self.command or "")

    @functools.cached_property
    def deny_candidates(self) -> list[tuple[str, tuple[str, ...]]]:
        found = list(_deny_candidates(self.command or ""))
        found += [(c.text, c.words) for c in self.analysis.commands]
        return found


@functools.lru_cache(maxsize=4096)
def _deny_candidates(command: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`shell_candidates.deny_candidates`, cached: the same commands come again and again."""
    return tuple(shell_candidates.deny_candidates(command))


@functools.lru_cache(maxsize=1024)
def _exact_structure(text: str) -> Any:
    """The structure of an exact rule's command, or None when it does not parse cleanly."""
    exact = shell_words.analyze(text)
    return exact.structure() if exact.ok else None


def _is_mcp_server_rule(rule_tool: str, tool: str) -> bool:
    if not (rule_tool.startswith("mcp__") and tool.startswith("mcp__")):
        return False
    server = rule_tool.removesuffix("__*")
    if server != rule_tool or server.count("__") == 1:
        return len(server) > len("mcp__") and tool.startswith(server + "__")
    return False


def _covers(rule_tool: str, tool: str, generous: bool) -> bool:
    """True when rules named `rule_tool` apply to calls of `tool`."""
    if rule_tool == tool:
        return True
    if rule_tool == "Edit" and tool in EDIT_TOOLS:
        return True
    if rule_tool == "Read" and tool in READ_TOOLS | SEARCH_TOOLS:
        return True
    return generous and rule_tool in EDIT_TOOLS and tool in EDIT_TOOLS


def _whole_tool(rule: RuleValue, tool: str, generous: bool) -> bool:
    content = rule.rule_content
    if content is None:
        return _covers(rule.tool_name, tool, generous) or _is_mcp_server_rule(
            rule.tool_name, tool)
    if content.strip() == "*" and (generous or rule.tool_name not in PATH_RULE_TOOLS):
        return _covers(rule.tool_name, tool, generous)
    return False


def _path_matches(rule: RuleValue, call: _Call, generous: bool) -> bool:
    if rule.tool_name not in PATH_RULE_TOOLS or not _covers(rule.tool_name, call.tool, generous):
        return False
    content = rule.rule_content or ""
    key = PATH_KEYS.get(call.tool)
    if key is None:
        return False
    path = call.input.get(key)
    if call.tool not in SEARCH_TOOLS:
        return rule_paths.path_rule_matches(content, path, call.cwd, generous=generous)
    if generous:
        if path is None:
            path = call.cwd
        return rule_paths.path_rule_matches(content, path, call.cwd, generous=True,
                                            directory=True)
    if call.tool == "Glob" and not _safe_glob(call.input.get("pattern")):
        return False
    return rule_paths.path_rule_matches(content, path, call.cwd, directory=True)


def _safe_glob(pattern: object) -> bool:
    """A Glob pattern that stays below its folder: relative, no `..` even in braces."""
    if not isinstance(pattern, str) or not pattern or pattern.startswith(("/", "~", "\\")):
        return False
    return ".." not in pattern and re.match(r"^[A-Za-z]:", pattern) is None


def _specifier_matches(rule: RuleValue, call: _Call, generous: bool) -> bool:
    """Match a rule that has a specifier, other than whole-tool `Tool(*)`."""
    content = rule.rule_content
    if content is None:
        return False
    if rule.tool_name in PATH_RULE_TOOLS:
        return _path_matches(rule, call, generous)
    if rule.tool_name != call.tool:
        return False
    if call.tool == WEBFETCH_TOOL:
        return rule_paths.domain_rule_matches(content, call.input.get("url"), generous=generous)
    if call.tool == BASH_TOOL and generous:
        if call.command is None:
            return True
        return any(bash_matches_generously(content, text, words)
                   for text, words in call.deny_candidates)
    return False


def _matches_generously(rule: RuleValue, call: _Call) -> bool:
    return _whole_tool(rule, call.tool, True) or _specifier_matches(rule, call, True)


def _bash_allow(allows: list[SessionRule], call: _Call) -> RuleVerdict | None:
    if call.command is None or call.input.get("dangerouslyDisableSandbox"):
        return None
    analysis = call.analysis
    if not analysis.ok:
        return None
    specific = [r for r in allows if r.rule.tool_name == BASH_TOOL and r.rule.rule_content]
    target = analysis.structure()
    for item in specific:
        spec = parse_bash_spec(item.rule.rule_content or "")
        if spec.kind == "exact" and _exact_structure(spec.text) == target:
            return RuleVerdict(RuleBehavior.ALLOW, item, (item,))
    used: list[SessionRule] = []
    for command in analysis.commands:
        match = next((r for r in specific
                      if bash_allows_command(r.rule.rule_content or "", command)), None)
        if match is None:
            return None
        if match not in used:
            used.append(match)
    return RuleVerdict(RuleBehavior.ALLOW, used[0], tuple(used)) if used else None


def evaluate(rules: Iterable[SessionRule], tool_name: str, tool_input: dict[str, Any],
             cwd: str) -> RuleVerdict | None:
    """Decide a tool call by the session rules, or return None when none matches.

    Only active (not revoked) rules count; the caller passes the session's rules.
    Deny beats ask beats allow, whatever the rules' specificity or order.

    Args:
        rules: the session's rules (revoked ones are skipped).
        tool_name: the tool the agent wants to call.
        tool_input: its input as the agent sent it.
        cwd: the session's working folder (absolute), the root for relative paths.
    """
    active = [r for r in rules if r.active]
    call = _Call(tool_name, tool_input, cwd)
    for behavior in (RuleBehavior.DENY, RuleBehavior.ASK):
        for item in active:
            if item.behavior is behavior and _matches_generously(item.rule, call):
                return RuleVerdict(behavior, item, (item,))
    if tool_name == QUESTION_TOOL:
        return None
    allows = [r for r in active if r.behavior is RuleBehavior.ALLOW]
    for item in allows:
        if _whole_tool(item.rule, tool_name, False):
            return RuleVerdict(RuleBehavior.ALLOW, item, (item,))
    if tool_name == BASH_TOOL:
        return _bash_allow(allows, call)
    for item in allows:
        if _specifier_matches(item.rule, call, False):
            return RuleVerdict(RuleBehavior.ALLOW, item, (item,))
    return None


def rule_for_request(tool_name: str, tool_input: dict[str, Any], cwd: str) -> RuleValue | None:
    """The narrowest rule to propose for "allow for this session", or None.

    Bash: the exact command (None when it is not fully parseable, or contains `*`,
    which a rule would read as a wildcard). File tools: `Edit(//real/path)` or
    `Read(//real/path)`; search tools with a path: `Read(//real/folder/**)`. WebFetch:
    `WebFetch(domain:host)`. MCP and other tools: the bare tool name. Questions and
    plan approvals get no rule.
    """
    data = tool_input if isinstance(tool_input, dict) else {}
    if not tool_name or tool_name in (QUESTION_TOOL, PLAN_TOOL):
        return None
    if tool_name == BASH_TOOL:
        command = data.get("command")
        if not isinstance(command, str) or "*" in command:
            return None
        if not shell_words.analyze(command).ok:
            return None
        return RuleValue(tool_name=BASH_TOOL, rule_content=command.strip())
    if tool_name == WEBFETCH_TOOL:
        host = rule_paths.strict_host(data.get("url"))
        return RuleValue(tool_name=WEBFETCH_TOOL, rule_content=f"domain:{host}") if host else None
    if tool_name in PATH_KEYS:
        real = rule_paths.canonical_path(data.get(PATH_KEYS[tool_name]), cwd)
        if tool_name in SEARCH_TOOLS:
            if real is None:
                return RuleValue(tool_name=tool_name)
            suffix = "/**" if real != "/" else "**"
            return RuleValue(tool_name="Read",
                             rule_content="/" + rule_paths.escape_path(real) + suffix)
        if real is None:
            return None
        rule_tool = "Edit" if tool_name in EDIT_TOOLS else "Read"
        return RuleValue(tool_name=rule_tool, rule_content="/" + rule_paths.escape_path(real))
    return RuleValue(tool_name=tool_name)
