"""From the CLI's permission suggestions to session grants.

"Allow for this session" sends only allow `addRules` updates, forced to destination
`session` (a suggestion's `localSettings` would write into the user's project).
Everything else (mode switches, directories, deny/ask rules, replace/remove) is kept
aside for the user to tick explicitly, and a switch to a mode that skips the callback
is flagged so the UI never offers it. Our own rule store is the source of truth for
session grants: `session_rules_from_updates` turns granted updates into `SessionRule`s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from qoder_desktop.domain.models import (
    PermissionMode,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionRule,
)

_SAFE_MODES = frozenset(mode.value for mode in PermissionMode if not mode.needs_confirmation)


@dataclass(frozen=True)
class SuggestionSplit:
    """The CLI's suggestions sorted for the "allow for this session" button.

    Attributes:
        session_rules: allow `addRules` updates, rewritten to destination `session`;
            sent along with "allow for this session". Whole-tool rules are not here.
        kept_aside: everything else, for the user to tick explicitly (mode switches,
            directories, deny/ask rules, replace/remove, and allow updates holding
            whole-tool rules such as plain `Bash`, rewritten to destination `session`).
        dropped: allow `addRules` updates with no usable rule; offered nowhere.
    """

    session_rules: tuple[PermissionSuggestion, ...]
    kept_aside: tuple[PermissionSuggestion, ...]
    dropped: tuple[PermissionSuggestion, ...] = ()


def is_dangerous(update: PermissionSuggestion) -> bool:
    """True for an update the UI must never offer: a switch to a mode that skips us.

    That is `setMode` to a mode that needs an explicit confirmation
    (`PermissionMode.needs_confirmation`: bypassPermissions, yolo, auto, acceptEdits),
    or to a mode that is missing or unknown; the person switches to those through the
    mode switch, which asks for that confirmation. default, plan and dontAsk are safe.
    """
    return update.type == "setMode" and (update.mode or "") not in _SAFE_MODES


_RULE_UPDATE_TYPES = frozenset({"addRules", "replaceRules", "removeRules"})


def grant_problem(update: PermissionSuggestion) -> str | None:
    """Why `update` must not be sent with a grant, or None when it may.

    Refused: a switch to a mode that stops the CLI from asking (`is_dangerous`), a rule
    update without a behaviour or without a usable rule, a `Tool(*)` rule (the CLI drops
    a session update holding one, and every other rule in it), a mode switch without a
    mode and a directory update without directories (or only blank ones).
    """
    if is_dangerous(update):
        return "it would stop the agent from asking"
    if update.type in _RULE_UPDATE_TYPES:
        if update.behavior is None:
            return "a rule update without a behavior"
        rules = update.rules or ()
        if not rules or len(_usable_rules(update)) != len(rules):
            return "a rule update without a usable rule"
        if any((rule.rule_content or "").strip() == "*" for rule in rules):
            return "the agent's CLI refuses Tool(*) rules; grant the whole tool instead"
    if update.type in ("addDirectories", "removeDirectories") and not any(
            (directory or "").strip() for directory in update.directories or ()):
        return "a directory update without directories"
    return None


def _usable_rules(update: PermissionSuggestion) -> tuple[RuleValue, ...]:
    return tuple(r for r in update.rules or () if r.tool_name.strip())


def is_whole_tool(rule: RuleValue) -> bool:
    """True for a rule that covers a whole tool (`Bash`, `Edit`, `Bash(*)`, `mcp__srv`).

    One MCP tool named exactly (`mcp__server__tool`) is not "whole": it is already the
    narrowest rule for that tool.
    """
    content = rule.rule_content
    if content is not None and content.strip() != "*":
        return False
    name = rule.tool_name
    return not (name.startswith("mcp__") and name.count("__") >= 2
                and not name.endswith("__*"))


def split_suggestions(suggestions: Iterable[PermissionSuggestion]) -> SuggestionSplit:
    """Sort suggestions into session grants and the rest (see `SuggestionSplit`)."""
    grants: list[PermissionSuggestion] = []
    aside: list[PermissionSuggestion] = []
    dropped: list[PermissionSuggestion] = []
    for update in suggestions:
        if update.type == "addRules" and update.behavior is RuleBehavior.ALLOW:
            usable = _usable_rules(update)
            narrow = tuple(r for r in usable if not is_whole_tool(r))
            whole = tuple(r for r in usable if is_whole_tool(r))
            if narrow:
                grants.append(update.model_copy(
                    update={"rules": narrow, "destination": "session"}))
            if whole:
                # A whole-tool rule is never pre-filled: the person ticks it explicitly.
                aside.append(update.model_copy(
                    update={"rules": whole, "destination": "session"}))
            if not usable:
                dropped.append(update)
        else:
            aside.append(update)
    return SuggestionSplit(tuple(grants), tuple(aside), tuple(dropped))


def session_rules_from_updates(session_id: str, updates: Iterable[PermissionSuggestion],
                               granted_by: str = "user") -> list[SessionRule]:
    """Turn granted `addRules` updates into our own session rules.

    Allow, deny and ask `addRules` updates each give one `SessionRule` per usable rule
    (duplicates within the call are merged). Other update types give none: our store
    only ever adds rules, and a dangerous update is never turned into anything.
    """
    result: list[SessionRule] = []
    seen: set[tuple[RuleBehavior, RuleValue]] = set()
    for update in updates:
        if update.type != "addRules" or update.behavior is None or is_dangerous(update):
            continue
        for rule in _usable_rules(update):
            key = (update.behavior, rule)
            if key in seen:
                continue
            seen.add(key)
            result.append(SessionRule(session_id=session_id, behavior=update.behavior,
                                      rule=rule, granted_by=granted_by))
    return result
