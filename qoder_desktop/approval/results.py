"""A `Decision` as the permission result JSON the agent CLIs accept.

One shape serves the ``--permission-prompt-tool`` of the MCP gateway and the
``decision`` of a ``PermissionRequest`` hook: ``{"behavior": "allow", "updatedInput":
{...}, "updatedPermissions": [...]}`` or ``{"behavior": "deny", "message": "...",
"interrupt": true}``. In both, the CLI holds the grants of "allow for this session"
(it applies ``updatedPermissions`` from either, checked against Claude Code 2.1.332)
and stays the authority on what it asks about.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qoder_desktop.domain.models import Decision, PermissionSuggestion, RuleBehavior, RuleValue


def deny_result(message: str, *, interrupt: bool = False) -> dict[str, Any]:
    """A deny permission result."""
    result: dict[str, Any] = {"behavior": "deny",
                              "message": message.strip() or "Qoder Desktop denied this."}
    if interrupt:
        result["interrupt"] = True
    return result


def removal_update(revoked: Sequence[RuleValue]) -> dict[str, Any]:
    """The session update that tells a CLI to drop allow rules revoked in the app."""
    return PermissionSuggestion(type="removeRules", rules=tuple(revoked),
                                behavior=RuleBehavior.ALLOW, destination="session").to_wire()


def permission_result(decision: Decision,
                      removals: Sequence[RuleValue] = ()) -> dict[str, Any]:
    """The permission result JSON for `decision`.

    Args:
        decision: the answer. The broker has already dropped every update that must not
            be granted (`rules.grants.grant_problem`); the rest go to the CLI as
            ``session`` updates, so the CLI holds them.
        removals: allow rules revoked in the app since the last allow; an allow asks the
            CLI to remove them (a CLI can only be told inside an answer).
    """
    if decision.kind.allows and decision.final_input is not None:
        result: dict[str, Any] = {"behavior": "allow", "updatedInput": dict(decision.final_input)}
        forwarded = [update.model_copy(update={"destination": "session"}).to_wire()
                     for update in decision.updates]
        if removals:
            forwarded.append(removal_update(removals))
        if forwarded:
            result["updatedPermissions"] = forwarded
        return result
    return deny_result(decision.message, interrupt=decision.interrupt)
