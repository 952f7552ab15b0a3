"""Our own session-rule matcher, which fails closed.

Rules use Claude Code's syntax, `Tool` or `Tool(specifier)`, and are evaluated in the
order deny, ask, allow: the first behaviour with a matching rule decides, however
specific an allow rule is. Deny and ask rules match generously (any segment of a shell
command, any reading of a path or URL); allow rules match strictly.

Semantics, in short (see the tests for the full tables):

- A whole-tool rule (`Bash`, `Edit`, `mcp__server`, and `Tool(*)` for tools without
  path specifiers) matches every call of that tool for deny and ask. As an *allow*
  rule it only counts for tools the CLI never asks about under it (MCP, WebFetch, ...):
  for Bash and the file tools the CLI still asks about sensitive files, paths outside
  the workspace and the like, so we never allow on a whole-tool Bash, Edit, Write or
  Read rule ourselves; the CLI holds it. `AskUserQuestion` is never allowed by a rule
  (an auto-allowed question would be answered with nothing).
- Bash specifiers (allow side: `rules.bash_allow`, which also asks about spelling
  variants, sensitive files and paths outside the session folder and its added
  directories): `Bash(npm test)` is exact (same argv, canonical spelling);
  `Bash(git diff *)` (a single trailing ` *`) and the legacy `Bash(npm run test:*)`
  are word-prefix rules: `npm run test:*` allows `npm run test` and
  `npm run test --watch`, not `npm run test:unit` or `npm run testing`; any other `*`
  is a glob over one simple command's text (`Bash(ls*)` matches `lsof`).
  A specifier allow never applies unless `shell_words.analyze` fully understands the
  line (no expansions, substitutions, redirections, assignments, newlines, ...), and
  every simple command of a compound line must be allowed on its own, possibly by
  different rules. The only exception is an exact rule whose text is the very same
  line. A call with `dangerouslyDisableSandbox` set is never allowed by a rule.
- Path specifiers (Read, Edit and the other edit tools): see `rule_paths`. An `Edit`
  rule covers Edit, Write, MultiEdit and NotebookEdit; a `Read` rule covers Read,
  NotebookRead and, best effort, Glob, Grep and LS (their `path` is a folder read
  recursively; a Glob pattern that is absolute or contains `..` is never allowed).
  For allow, only `Edit(...)` and `Read(...)` rules count (the CLI checks edits
  against Edit rules: a `Write(...)` allow rule asks), and a sensitive file or folder
  (`rules.sensitive`) always asks.
- `WebFetch(domain:...)`: see `rule_paths.domain_rule_matches`.
- MCP: `mcp__server__tool` exactly; `mcp__server` or `mcp__server__*` for the server.
- Any other tool with a specifier never matches. Everything is case-sensitive except
  host names.

Turning the CLI's suggestions into grants lives in `rule_grants` and is re-exported
here (`split_suggestions`, `is_dangerous`, `session_rules_from_updates`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qoder_desktop.domain.models import (
    RuleBehavior,
    RuleValue,
    SessionRule,
)
from qoder_desktop.domain.tools import (
    BASH_TOOL,
    EDIT_TOOLS,
    PATH_RULE_TOOLS,
    PLAN_TOOL,
    QUESTION_TOOL,
    READ_TOOLS,
    SEARCH_TOOLS,
    WEBFETCH_TOOL,
)
from qoder_desktop.rules import paths as rule_paths
from qoder_desktop.rules import sensitive
from qoder_desktop.rules.bash_allow import (
    bash_allow,
    parse_bash_spec,
    spec_allows,
    wildcard_match,
)
from qoder_desktop.rules.grants import (
    SuggestionSplit,
    is_dangerous,
    session_rules_from_updates,
    split_suggestions,
)
from qoder_desktop.rules.ruleset import (
    Call,
    RuleSet,
    bash_matches_any,
    bash_matches_generously,
    covers,
    rule_set,
    whole_tool,
)
from qoder_desktop.shell import words as shell_words
from qoder_desktop.shell.words import SimpleCommand

__all__ = [
    "Explanation", "RuleVerdict", "SuggestionSplit", "bash_allows_command",
    "bash_matches_generously", "evaluate", "explain", "is_dangerous", "parse_bash_spec",
    "path_rule_covering",
    "rule_for_request", "session_rules_from_updates", "split_suggestions", "wildcard_match",
]

#: Tools the CLI still asks about under a whole-tool allow rule: we never allow them
#: on such a rule ourselves.
NO_WHOLE_TOOL_ALLOW = frozenset({BASH_TOOL}) | PATH_RULE_TOOLS | SEARCH_TOOLS
#: Which rule names count for allow, per tool (the CLI checks edits against Edit rules).
ALLOW_RULE_TOOLS: Mapping[str, str] = {
    **{tool: "Edit" for tool in EDIT_TOOLS},
    **{tool: "Read" for tool in READ_TOOLS | SEARCH_TOOLS},
}
#: Which input field holds the path, per tool.
PATH_KEYS: Mapping[str, str] = {
    "Read": "file_path", "Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path", "NotebookRead": "notebook_path",
    "Glob": "path", "Grep": "path", "LS": "path",
}


@dataclass(frozen=True, slots=True)
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
class Explanation:
    """What the app decides alone about one call, and why.

    Attributes:
        behavior: allow, deny or ask (ask: a person decides).
        reason: which rule matched, or why it asks ("sensitive file .git/config", ...).
        verdict: the rule verdict (None when no rule decided: the call asks).
    """

    behavior: RuleBehavior
    reason: str
    verdict: RuleVerdict | None


def bash_allows_command(content: str, command: SimpleCommand) -> bool:
    """Strict match of a Bash specifier against one parsed simple command.

    Spelling, wrappers and paths are checked by `rules.bash_allow`, not here.
    """
    return spec_allows(content, command)


def _path_matches(rule: RuleValue, call: Call, generous: bool) -> bool:
    if rule.tool_name not in PATH_RULE_TOOLS or not covers(rule.tool_name, call.tool, generous):
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


def _specifier_matches(rule: RuleValue, call: Call, generous: bool) -> bool:
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
        return bash_matches_any(content, call.deny_candidates)
    return False


def _matches_generously(rule: RuleValue, call: Call) -> bool:
    return whole_tool(rule, call.tool, True) or _specifier_matches(rule, call, True)


def _path_allow(allows: Sequence[SessionRule], call: Call) -> SessionRule | str:
    """The Edit/Read rule that allows a file tool call, or why it asks."""
    key = PATH_KEYS[call.tool]
    path = call.input.get(key)
    if call.tool in SEARCH_TOOLS and path is None:
        path = call.cwd
    if isinstance(path, str) and path:
        reason = sensitive.sensitive_reason(path, call.cwd)
        if reason is not None:
            return reason
    rule_tool = ALLOW_RULE_TOOLS[call.tool]
    others = False
    for item in allows:
        rule = item.rule
        if rule.rule_content is None:
            continue
        if rule.tool_name != rule_tool:
            others = others or rule.tool_name in PATH_RULE_TOOLS
            continue
        if _path_matches(rule, call, False):
            return item
    if others:
        return (f"no {rule_tool}(...) allow rule matches (the CLI checks this tool "
                f"against {rule_tool} rules only)")
    return f"no {rule_tool}(...) allow rule matches {path}"


def _allow(ruleset: RuleSet, call: Call, add_dirs: Sequence[str]) -> RuleVerdict | str:
    """The allow verdict for a call, or why it asks."""
    allows = ruleset.allow
    tool = call.tool
    if tool not in NO_WHOLE_TOOL_ALLOW:
        whole = ruleset.whole_tool_allow(tool)
        if whole is not None:
            return RuleVerdict(RuleBehavior.ALLOW, whole, (whole,))
    if tool == BASH_TOOL:
        if call.input.get("dangerouslyDisableSandbox"):
            return "the command asks to run outside the sandbox"
        found = bash_allow(allows, call.command, call.cwd, add_dirs, compiled=ruleset.bash,
                           analysis=None if call.command is None else call.analysis)
        if not isinstance(found, str):
            return RuleVerdict(RuleBehavior.ALLOW, found[0], found)
        reason = found
    elif tool in PATH_KEYS:
        match = _path_allow(allows, call)
        if not isinstance(match, str):
            return RuleVerdict(RuleBehavior.ALLOW, match, (match,))
        reason = match
    else:
        for item in allows:
            if _specifier_matches(item.rule, call, False):
                return RuleVerdict(RuleBehavior.ALLOW, item, (item,))
        reason = f"no allow rule matches {tool}"
    if not reason.startswith("no ") or tool not in NO_WHOLE_TOOL_ALLOW:
        return reason
    whole = ruleset.whole_tool_allow(tool)
    if whole is not None:
        return (f"the whole-tool rule {whole.rule} is held by the agent's CLI, which still "
                f"asks about some calls; Qoder Desktop does not allow on it by itself")
    return reason


def _decide(rules: Iterable[SessionRule], tool_name: str, tool_input: dict[str, Any],
            cwd: str, add_dirs: Sequence[str]) -> RuleVerdict | str:
    """The rule verdict for a call, or why it asks (what `explain` words as a reason)."""
    ruleset = rule_set(rules)
    call = Call(tool_name, tool_input, cwd)
    for item in ruleset.deny:
        if _matches_generously(item.rule, call):
            return RuleVerdict(RuleBehavior.DENY, item, (item,))
    for item in ruleset.ask:
        if _matches_generously(item.rule, call):
            return RuleVerdict(RuleBehavior.ASK, item, (item,))
    if tool_name == QUESTION_TOOL:
        return "questions always go to a person"
    if not ruleset.allow:
        return "no allow rule"
    return _allow(ruleset, call, add_dirs)


def explain(rules: Iterable[SessionRule], tool_name: str, tool_input: dict[str, Any],
            cwd: str, add_dirs: Sequence[str] = ()) -> Explanation:
    """Decide a tool call by the session rules, with the reason (see `evaluate`).

    Returns:
        allow (which rules), deny (which rule) or ask (the ask rule, or why no rule
        allows it: "sensitive file .git/config", "path argument outside the session
        folder: /x", ...).
    """
    found = _decide(rules, tool_name, tool_input, cwd, add_dirs)
    if isinstance(found, str):
        return Explanation(RuleBehavior.ASK, found, None)
    if found.behavior is RuleBehavior.ALLOW:
        names = ", ".join(str(r.rule) for r in found.rules)
        return Explanation(RuleBehavior.ALLOW, f"allowed by the rule {names}", found)
    verb = "denied" if found.behavior is RuleBehavior.DENY else "asked"
    return Explanation(found.behavior, f"{verb} by the rule {found.rule.rule}", found)


def evaluate(rules: Iterable[SessionRule], tool_name: str, tool_input: dict[str, Any],
             cwd: str, add_dirs: Sequence[str] = ()) -> RuleVerdict | None:
    """Decide a tool call by the session rules, or return None when a person must.

    Only active (not revoked) rules count; the caller passes the session's rules.
    Deny beats ask beats allow, whatever the rules' specificity or order. An allow is
    never broader than Claude Code's own (see the module docstring): when unsure, None.
    `explain` gives the same verdict with its reason; this skips wording the reason.

    Args:
        rules: the session's rules (revoked ones are skipped).
        tool_name: the tool the agent wants to call.
        tool_input: its input as the agent sent it.
        cwd: the session's working folder (absolute), the root for relative paths.
        add_dirs: the session's added directories; shell path arguments there count as
            inside the session folder (outside both, a command asks).
    """
    found = _decide(rules, tool_name, tool_input, cwd, add_dirs)
    return None if isinstance(found, str) else found


def path_rule_covering(rules: Iterable[SessionRule], tool_name: str,
                       tool_input: dict[str, Any], cwd: str) -> SessionRule | None:
    """The active allow `Edit(...)`/`Read(...)` rule whose path covers a file tool call,
    sensitive files included, or None.

    For explanations only ("your rule X covers this call"): on a sensitive file
    `evaluate` asks under any rule, as the CLI does, though the person's rule names it.
    """
    if tool_name not in PATH_KEYS:
        return None
    call = Call(tool_name, tool_input, cwd)
    rule_tool = ALLOW_RULE_TOOLS[tool_name]
    for item in rules:
        rule = item.rule
        if (item.active and item.behavior is RuleBehavior.ALLOW
                and rule.tool_name == rule_tool and rule.rule_content is not None
                and _path_matches(rule, call, False)):
            return item
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
