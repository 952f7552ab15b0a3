"""What the Claude Code CLI would decide about a call under session rules (`rules check`).

`predict` models the bundled CLI's observed behaviour (measured live by
tests/differential) so that `qoder-desktop rules check` can explain a rule to a person.
It never grants anything: the app's own decisions use `rules.matcher.evaluate`, which
stays stricter. Where the model cannot tell, it answers `ask` with a reason starting
with "unsure:" (the CLI will probably ask).

Order, as in the CLI: deny rules first (Bash: the command, any segment, through
wrappers and `$(...)`; files: case-insensitive, any depth, a `Read` deny also stops
writes; WebFetch: the normalised host), then allow. An update the CLI refuses
(`Bash(*)`, an MCP rule with a specifier) leaves the session without those allow rules.
Reads inside the session folder and its added directories need no rule; Glob and Grep
are not tools of this CLI (the call is refused).

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from typing import Any

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.domain.tools import BASH_TOOL, EDIT_TOOLS, WEBFETCH_TOOL
from qoder_desktop.domain.workspace import inside_forms
from qoder_desktop.rules import cli_bash, cli_files
from qoder_desktop.rules import paths as rule_paths
from qoder_desktop.rules.matcher import explain
from qoder_desktop.rules.ruleset import bash_matches_any
from qoder_desktop.shell import candidates as shell_candidates
from qoder_desktop.shell import commands as shell_commands

READS = frozenset({"Read", "NotebookRead"})
PATH_KEY = {"Read": "file_path", "NotebookRead": "notebook_path", "Edit": "file_path",
            "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
MISSING_TOOLS = frozenset({"Glob", "Grep"})


def refused_update(rules: Sequence[RuleValue]) -> RuleValue | None:
    """The allow rule that makes the CLI refuse the whole update, or None."""
    for rule in rules:
        content = rule.rule_content
        if content is None:
            continue
        if rule.tool_name == BASH_TOOL and content.strip() == "*":
            return rule
        if rule.tool_name.startswith("mcp__"):
            return rule
    return None


def predict(rules: Sequence[SessionRule], tool: str, tool_input: dict[str, Any], cwd: str,
            add_dirs: Sequence[str] = ()) -> tuple[str, str]:
    """("allow" | "ask" | "deny", reason) as the CLI would decide the call."""
    allow = [r.rule for r in rules if r.behavior is RuleBehavior.ALLOW]
    deny = [r.rule for r in rules if r.behavior is RuleBehavior.DENY]
    if tool in MISSING_TOOLS:
        return "deny", f"this CLI has no {tool} tool"
    denied = _denied(deny, rules, tool, tool_input, cwd)
    if denied is not None:
        return denied
    note = ""
    refused = refused_update(allow)
    if refused is not None:
        allow = []
        note = f" (the CLI refuses an update holding {refused}, so no allow rule applies)"
    verdict, reason = _allowed(allow, rules, tool, tool_input, cwd, add_dirs)
    return verdict, reason + note


def _denied(deny: Sequence[RuleValue], rules: Sequence[SessionRule], tool: str,
            tool_input: dict[str, Any], cwd: str) -> tuple[str, str] | None:
    if not deny:
        return None
    if tool in PATH_KEY:
        path = tool_input.get(PATH_KEY[tool])
        for rule in deny:
            applies = rule.tool_name == tool or rule.tool_name == "Read" or (
                rule.tool_name in EDIT_TOOLS and tool in EDIT_TOOLS)
            if not applies:
                continue
            if rule.rule_content is None or (isinstance(path, str) and cli_files.deny_matches(
                    rule.rule_content, path, cwd)):
                return "deny", f"denied by the rule {rule}"
        return None
    if tool == WEBFETCH_TOOL:
        host = cli_files.cli_host(tool_input.get("url"))
        for rule in deny:
            if rule.tool_name != WEBFETCH_TOOL:
                continue
            content = rule.rule_content
            if content is None or (host and content.startswith("domain:")
                                   and content[7:].strip().lower() == host):
                return "deny", f"denied by the rule {rule}"
        return None
    if tool == BASH_TOOL:
        return _bash_denied(deny, tool_input.get("command"))
    result = explain([r for r in rules if r.behavior is RuleBehavior.DENY], tool, tool_input,
                     cwd)
    if result.behavior is RuleBehavior.DENY:
        return "deny", result.reason
    return None


def _bash_denied(deny: Sequence[RuleValue], command: object) -> tuple[str, str] | None:
    if not isinstance(command, str):
        return None
    for rule in deny:
        if rule.tool_name != BASH_TOOL:
            continue
        if rule.rule_content is None:
            return "deny", f"denied by the rule {rule}"
        candidates = shell_candidates.deny_candidates(command)
        if not bash_matches_any(rule.rule_content, candidates):
            continue
        if any(shell_commands.is_shell(shell_commands.command_name(w))
               for _, words in candidates for w in words[:1]):
            return "ask", (f"the deny rule {rule} matches inside a nested shell; the CLI "
                           f"asks")
        return "deny", f"denied by the rule {rule}"
    return None


def _allowed(allow: Sequence[RuleValue], rules: Sequence[SessionRule], tool: str,
             tool_input: dict[str, Any], cwd: str, add_dirs: Sequence[str]
             ) -> tuple[str, str]:
    if tool == BASH_TOOL:
        texts = [r.rule_content for r in allow
                 if r.tool_name == BASH_TOOL and r.rule_content is not None]
        whole = any(r.tool_name == BASH_TOOL and r.rule_content is None for r in allow)
        return cli_bash.predict_bash(tool_input.get("command"), texts, whole, cwd, add_dirs)
    if tool in PATH_KEY:
        return _file(allow, tool, tool_input.get(PATH_KEY[tool]), cwd, add_dirs)
    if tool == WEBFETCH_TOOL:
        return _webfetch(allow, tool_input.get("url"))
    if tool.startswith("mcp__"):
        return _mcp(allow, tool)
    kept = [r for r in rules if r.behavior is RuleBehavior.ALLOW and r.rule in allow]
    result = explain(kept, tool, tool_input, cwd, add_dirs)
    return result.behavior.value, result.reason


def _usable(rule: RuleValue) -> bool:
    """A path specifier the CLI can match (`..` in it, or a bare `*`, never matches)."""
    content = rule.rule_content or ""
    return content.strip() != "*" and ".." not in content.replace("\\", "/").split("/")


def _file(allow: Sequence[RuleValue], tool: str, path: object, cwd: str,
          add_dirs: Sequence[str]) -> tuple[str, str]:
    if not isinstance(path, str) or not path:
        return "ask", "no path"
    if cli_files.windows_shape(path):
        return "ask", f"the CLI asks about a Windows path shape: {path}"
    lexical = cli_files.lexical(path, cwd)
    real = os.path.realpath(lexical)
    roots = [os.path.abspath(d) for d in (cwd, *add_dirs)]
    real_roots = [os.path.realpath(d) for d in roots]
    inside = inside_forms(lexical, real, roots, real_roots)
    if tool in READS:
        if inside:
            return "allow", "reads inside the session folders need no rule"
        for rule in allow:
            if rule.tool_name != "Read":
                continue
            if rule.rule_content is None:
                return "allow", f"allowed by the rule {rule}"
            if _usable(rule) and rule_paths.path_rule_matches(rule.rule_content, lexical, cwd):
                return "allow", f"allowed by the rule {rule}"
        return "ask", f"no Read allow rule matches {path}"
    reason = cli_files.sensitive_write(lexical, cwd)
    if reason is not None:
        return "ask", f"the CLI asks about edits to a {reason}"
    for rule in allow:
        if rule.rule_content is None:
            if rule.tool_name == tool and inside:
                return "allow", f"allowed by the rule {rule}"
            continue
        if rule.tool_name == "Edit" and _usable(rule) and rule_paths.path_rule_matches(
                rule.rule_content, lexical, cwd):
            return "allow", f"allowed by the rule {rule}"
    return "ask", f"no Edit allow rule matches {path}"


def _webfetch(allow: Sequence[RuleValue], url: object) -> tuple[str, str]:
    host = cli_files.cli_host(url)
    for rule in allow:
        if rule.tool_name != WEBFETCH_TOOL:
            continue
        content = rule.rule_content
        if content is None:
            return "allow", f"allowed by the rule {rule}"
        if host and content.startswith("domain:"):
            domain = content[7:].strip().lower()
            if domain == host or (domain.startswith("*.") and host.endswith(domain[1:])):
                return "allow", f"allowed by the rule {rule}"
    return "ask", "no WebFetch allow rule matches the host"


def _mcp(allow: Sequence[RuleValue], tool: str) -> tuple[str, str]:
    parts = tool.split("__")
    server = "__".join(parts[:2])
    for rule in allow:
        name = rule.tool_name
        if rule.rule_content is not None:
            continue
        if name in (tool, server) or (name.startswith(server + "__") and "*" in name
                                      and fnmatch.fnmatchcase(tool, name)):
            return "allow", f"allowed by the rule {rule}"
    return "ask", f"no allow rule matches {tool}"
