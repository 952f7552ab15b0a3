"""A `Decision` as the permission result JSON the agent CLIs accept.

One shape serves the ``--permission-prompt-tool`` of the MCP gateway and the
``decision`` of a ``PermissionRequest`` hook: ``{"behavior": "allow", "updatedInput":
{...}, "updatedPermissions": [...]}`` or ``{"behavior": "deny", "message": "...",
"interrupt": true}``. What differs is who holds the grants of "allow for this session"
(see `permission_result`).
"""

from __future__ import annotations

from typing import Any

from qoder_desktop.domain.models import Decision
from qoder_desktop.rules.grants import is_dangerous

_RULE_UPDATES = ("addRules", "replaceRules", "removeRules")


def deny_result(message: str, *, interrupt: bool = False) -> dict[str, Any]:
    """A deny permission result."""
    result: dict[str, Any] = {"behavior": "deny",
                              "message": message.strip() or "Qoder Desktop denied this."}
    if interrupt:
        result["interrupt"] = True
    return result


def permission_result(decision: Decision, *, forward_rules: bool = False) -> dict[str, Any]:
    """The permission result JSON for `decision`.

    Args:
        decision: the answer.
        forward_rules: send rule grants to the CLI (as ``session`` updates), so the CLI
            holds them and stays the authority (terminal hooks). Without it (the
            gateway), rule grants stay in our rule store and only safe mode switches and
            directory updates are forwarded. Dangerous mode switches are never sent.
    """
    if decision.kind.allows and decision.final_input is not None:
        result: dict[str, Any] = {"behavior": "allow", "updatedInput": dict(decision.final_input)}
        forwarded = [update.model_copy(update={"destination": "session"}).to_wire()
                     for update in decision.updates
                     if (forward_rules or update.type not in _RULE_UPDATES)
                     and not is_dangerous(update)]
        if forwarded:
            result["updatedPermissions"] = forwarded
        return result
    return deny_result(decision.message, interrupt=decision.interrupt)
