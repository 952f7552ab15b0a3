"""What "allow for this session" offers for one request, Qt-free.

The rules a grant would add: the CLI's allow suggestions (narrow rules only, forced to
destination `session`, `grants.split_suggestions`), or our own narrowest rule when the
CLI suggested none (`matcher.rule_for_request`); never the person's rule that already
covers the call (the agent's CLI holds it and asked anyway), which is named instead; and
nothing at all for a command or suggested rule longer than `ANALYSIS_LIMIT` (the
analysis would block the app; the CLI decides). The approval dialog's session-grant
section and the phone's view of a request offer the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from qoder_desktop.domain.models import (
    ApprovalRequest,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.domain.tools import BASH_TOOL
from qoder_desktop.rules.grants import split_suggestions
from qoder_desktop.rules.matcher import rule_for_request

ANALYSIS_LIMIT = 32 * 1024
"""Commands (and suggested rules) with more characters than this are not analysed for
a session-rule suggestion or the risk lens (`analysed_size`)."""


def analysed_size(tool_name: str, tool_input: Mapping[str, object],
                  rule_texts: Sequence[str] = ()) -> int:
    """How much the session-rule analysis would read: a Bash command (the shell
    analyzer reads all of it) and every rule text the CLI suggested. File contents are
    not read: a large Write still gets its path rule."""
    command = tool_input.get("command") if tool_name == BASH_TOOL else None
    size = len(command) if isinstance(command, str) else 0
    return max([size, *(len(text) for text in rule_texts)])


def without_covering(grants: Sequence[PermissionSuggestion], covering: str | None
                     ) -> tuple[list[PermissionSuggestion], str | None]:
    """`grants` without the rule that already covers the request, and that rule when
    one was left out."""
    try:
        rule = RuleValue.parse(covering) if covering else None
    except ValueError:
        rule = None
    if rule is None:
        return list(grants), None
    kept = [grant.model_copy(update={"rules": tuple(r for r in grant.rules or ()
                                                    if r != rule)}) for grant in grants]
    left_out = any(rule in (grant.rules or ()) for grant in grants)
    return [grant for grant in kept if grant.rules], covering if left_out else None


@dataclass(frozen=True)
class SessionOffer:
    """The rules "allow for this session" would add for one request.

    Attributes:
        grants: `addRules` updates with destination `session`, each with its rules.
        already: the person's rule that covers the call and was left out, if any.
        too_large: the command or a suggested rule is too large to analyse: no rule.
        size: what the analysis would read (`analysed_size`).
    """

    grants: tuple[PermissionSuggestion, ...]
    already: str | None
    too_large: bool
    size: int

    def rules(self) -> list[RuleValue]:
        """Every offered rule, in order (the indexes a phone answers with)."""
        return [rule for grant in self.grants for rule in grant.rules or ()]

    def chosen(self, indexes: Sequence[int]) -> tuple[PermissionSuggestion, ...]:
        """The grants holding only the rules at `indexes` (into `rules()`).

        Raises:
            ValueError: an index that is not an offered rule, or none at all.
        """
        wanted = set(indexes)
        if not wanted or not wanted <= set(range(len(self.rules()))):
            raise ValueError("choose one or more of the offered rules")
        result, index = [], 0
        for grant in self.grants:
            rules = []
            for rule in grant.rules or ():
                if index in wanted:
                    rules.append(rule)
                index += 1
            if rules:
                result.append(grant.model_copy(update={"rules": tuple(rules)}))
        return tuple(result)


def session_offer(request: ApprovalRequest) -> SessionOffer:
    """What "allow for this session" offers for `request` (see the module docstring)."""
    split = split_suggestions(request.suggestions)
    size = analysed_size(request.tool_name, request.tool_input,
                         [str(rule) for grant in split.session_rules
                          for rule in grant.rules or ()])
    too_large = size > ANALYSIS_LIMIT
    grants = [] if too_large else list(split.session_rules)
    if not grants and not too_large:
        rule = rule_for_request(request.tool_name, dict(request.tool_input), request.cwd or "")
        if rule is not None:
            grants.append(PermissionSuggestion(type="addRules", rules=(rule,),
                                               behavior=RuleBehavior.ALLOW,
                                               destination="session"))
    kept, already = without_covering(grants, request.covered_by_rule)
    return SessionOffer(tuple(kept), already, too_large, size)
