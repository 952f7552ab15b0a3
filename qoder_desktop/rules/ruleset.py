"""What the matcher works out once: a call's rule set, the call's shell reading.

A session's rules come from the store's cache as the same frozen objects on every tool
call, so their split by behaviour and the compiled Bash allow rules are kept per list of
rule objects (`rule_set`). `Call` holds one tool call under evaluation and computes its
shell analysis and deny candidates at most once. The generous (deny and ask) match of a
Bash specifier against one candidate is `bash_matches_generously`; which rules are for a
whole tool is `whole_tool`, and a rule set keeps its first whole-tool allow rule per tool.

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from operator import is_
from typing import Any

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.domain.tools import EDIT_TOOLS, PATH_RULE_TOOLS, READ_TOOLS, SEARCH_TOOLS
from qoder_desktop.rules.bash_allow import BashRules, BashSpec, bash_rules, parse_bash_spec
from qoder_desktop.shell import candidates as shell_candidates
from qoder_desktop.shell import words as shell_words
from qoder_desktop.shell.words import ShellAnalysis

_BOUNDARY = frozenset(" \t\n\r;&|<>()$`'\"\\{}!#*?[]~")


def _raw_prefix(text: str, prefix: str) -> bool:
    if not prefix:
        return True
    return text == prefix or (text.startswith(prefix) and text[len(prefix)] in _BOUNDARY)


def bash_matches_generously(content: str, text: str, words: tuple[str, ...]) -> bool:
    """Deny/ask match of a Bash specifier against one candidate (see `deny_candidates`)."""
    spec, rule_words = _generous_spec(content)
    return _generous_match(spec, rule_words, text, words)


def bash_matches_any(content: str, candidates: Iterable[tuple[str, tuple[str, ...]]]) -> bool:
    """True when the Bash specifier matches one of the (text, words) candidates
    generously (`bash_matches_generously`, the specifier worked out once)."""
    spec, rule_words = _generous_spec(content)
    return any(_generous_match(spec, rule_words, text, words) for text, words in candidates)


def _generous_match(spec: BashSpec, rule_words: tuple[str, ...], text: str,
                    words: tuple[str, ...]) -> bool:
    if spec.kind == "glob":
        return spec.glob_matches(text) or spec.glob_matches(" ".join(words))
    if spec.kind == "exact":
        return text == spec.text or (bool(rule_words) and words == rule_words)
    if rule_words and words[:len(rule_words)] == rule_words:
        return True
    return _raw_prefix(text, spec.text)


@functools.lru_cache(maxsize=1024)
def _generous_spec(content: str) -> tuple[BashSpec, tuple[str, ...]]:
    """A Bash specifier and its lenient words (for deny and ask matching), worked out once."""
    spec = parse_bash_spec(content)
    return spec, shell_candidates.lenient_words(spec.text)


def _is_mcp_server_rule(rule_tool: str, tool: str) -> bool:
    if not (rule_tool.startswith("mcp__") and tool.startswith("mcp__")):
        return False
    server = rule_tool.removesuffix("__*")
    if server != rule_tool or server.count("__") == 1:
        return len(server) > len("mcp__") and tool.startswith(server + "__")
    return False


def covers(rule_tool: str, tool: str, generous: bool) -> bool:
    """True when rules named `rule_tool` apply to calls of `tool`."""
    if rule_tool == tool:
        return True
    if rule_tool == "Edit" and tool in EDIT_TOOLS:
        return True
    if rule_tool == "Read" and tool in READ_TOOLS | SEARCH_TOOLS:
        return True
    return generous and rule_tool in EDIT_TOOLS and tool in EDIT_TOOLS


def whole_tool(rule: RuleValue, tool: str, generous: bool) -> bool:
    """True when `rule` is a rule for the whole of `tool` (no specifier, `Tool(*)`, or
    an MCP server's rule for one of its tools); `generous` as for deny and ask."""
    content = rule.rule_content
    if content is None:
        return covers(rule.tool_name, tool, generous) or _is_mcp_server_rule(
            rule.tool_name, tool)
    if content.strip() == "*" and (generous or rule.tool_name not in PATH_RULE_TOOLS):
        return covers(rule.tool_name, tool, generous)
    return False


class RuleSet:
    """The active rules of a call, by behaviour, with the compiled Bash allow rules.

    Built once per list of rule objects (see `rule_set`): the rules are frozen, so
    what is derived from them stays true.
    """

    def __init__(self, rules: tuple[SessionRule, ...]) -> None:
        self.rules = rules  # keeps the objects, and so their ids, alive
        self.deny: list[SessionRule] = []
        self.ask: list[SessionRule] = []
        self.allow: list[SessionRule] = []
        lists = {RuleBehavior.DENY: self.deny, RuleBehavior.ASK: self.ask,
                 RuleBehavior.ALLOW: self.allow}
        for item in rules:
            if item.active:
                lists[item.behavior].append(item)
        self.bash: BashRules = bash_rules(self.allow)
        self._whole_tool_allow: dict[str, SessionRule | None] = {}

    def whole_tool_allow(self, tool: str) -> SessionRule | None:
        """The first allow rule for the whole `tool` (`whole_tool`, strict), or None;
        worked out once per tool name (a bounded number of names: they come from the
        agent)."""
        known = self._whole_tool_allow
        if tool in known:
            return known[tool]
        found = next((item for item in self.allow if whole_tool(item.rule, tool, False)),
                     None)
        if len(known) < _WHOLE_TOOL_NAMES_KEPT:
            known[tool] = found
        return found


_WHOLE_TOOL_NAMES_KEPT = 256
_RULE_SETS: dict[tuple[int, int], list[RuleSet]] = {}
_RULE_SETS_MAX = 256


def rule_set(rules: Iterable[SessionRule]) -> RuleSet:
    """The `RuleSet` of these rule objects, cached by their identity.

    A session's active rules come from the store's cache as the same objects on every
    call (in a new list each time). A cached set holds its rules, so the id of its
    first rule cannot be reused by another object while it is kept; a set is found by
    that id and the count, and taken only when every rule is the very same object.
    """
    items = rules if isinstance(rules, (tuple, list)) else tuple(rules)
    key = (id(items[0]) if items else 0, len(items))
    bucket = _RULE_SETS.get(key)
    if bucket is not None:
        for found in bucket:
            if all(map(is_, items, found.rules)):
                return found
    found = RuleSet(tuple(items))
    if bucket is None:
        if len(_RULE_SETS) >= _RULE_SETS_MAX:
            _RULE_SETS.clear()
        _RULE_SETS[key] = bucket = []
    elif len(bucket) >= _RULE_SETS_MAX:
        bucket.clear()
    bucket.append(found)
    return found


class Call:
    """One tool call under evaluation; the shell analysis is computed once."""

    def __init__(self, tool_name: str, tool_input: Any, cwd: str) -> None:
        self.tool = tool_name
        self.input: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
        self.cwd = cwd or "."
        value = self.input.get("command")
        self.command: str | None = value if isinstance(value, str) else None
        # Worked out on first use (plain attributes: functools.cached_property takes a
        # lock on every first access before Python 3.12).
        self._analysis: ShellAnalysis | None = None
        self._candidates: Sequence[tuple[str, tuple[str, ...]]] | None = None

    @property
    def analysis(self) -> ShellAnalysis:
        """The strict shell analysis of the Bash `command` input ("" when there is none)."""
        if self._analysis is None:
            self._analysis = shell_words.analyze(self.command or "")
        return self._analysis

    @property
    def deny_candidates(self) -> Sequence[tuple[str, tuple[str, ...]]]:
        """Every (text, words) a deny or ask Bash rule is tried against."""
        if self._candidates is None:
            command = self.command or ""
            plain = shell_candidates.plain_candidates(command, self.analysis)
            if plain is not None:  # the common case, worked out from the analysis
                self._candidates = plain
                return plain
            found = _deny_candidates(command)
            # The lexer's segments are usually among them already (a plain line is its
            # own one segment); a repeated candidate would only be matched twice.
            extra = [pair for pair in ((c.text, c.words) for c in self.analysis.commands)
                     if pair not in found]
            self._candidates = found + tuple(extra) if extra else found
        return self._candidates


@functools.lru_cache(maxsize=shell_words.RECENT_LINES)
def _deny_candidates(command: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`shell_candidates.deny_candidates`, cached: the same commands come again and again."""
    return tuple(shell_candidates.deny_candidates(command))
