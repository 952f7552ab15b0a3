"""What the session rules decide about a request, for the broker.

One authority for grants (see docs/DESIGN-NOTES.md, "Who decides"): every "allow for
this session" goes to the agent's CLI as a `session` update, so the CLI holds the
grant and decides matching calls itself. Our rules never allow anything: only a person
or the CLI does (`Decision` refuses any other allow).

- A new request that reaches us although one of our allow rules covers it was
  escalated by the CLI on purpose (a sensitive file, a path outside the workspace, a
  spelling it treats as different): a person sees it, told which rule covers it
  (`decide_by_rule`).
- Requests already waiting when a person grants rules (`sibling_outcome`): a deny rule
  of the grant that covers one denies it; an allow rule that covers one only marks it
  "covered by your new rule" (the CLI asked before it held the rule, and our matcher is
  not the CLI), and the person allows it with one key, or not.
- Deny rules always decide (stricter than the CLI is safe); a rule's deny is
  `DecidedBy.SESSION_RULE`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from qoder_desktop.domain.models import (
    ApprovalRequest,
    DecidedBy,
    Decision,
    PermissionSuggestion,
    RequestKind,
    RuleBehavior,
    SessionRule,
)
from qoder_desktop.rules import grants
from qoder_desktop.rules import matcher as rules

log = logging.getLogger(__name__)


class RuleStore(Protocol):
    """Where session rules live (the SQLite store in the app)."""

    def active_rules(self, session_id: str) -> list[SessionRule]:
        """The session's rules that are not revoked."""
        ...

    def add_rules(self, new_rules: Iterable[SessionRule]) -> None:
        """Persist newly granted rules."""
        ...


UpdateCheck = Callable[[PermissionSuggestion], str | None]
"""Returns why the agent's SDK would not deliver an update, or None when it would."""


def decide_by_rule(rule_store: RuleStore, request: ApprovalRequest
                   ) -> tuple[ApprovalRequest, Decision | None]:
    """A deny rule's decision; an allow rule only marks the request (the CLI holds it)."""
    if request.kind is not RequestKind.TOOL:
        return request, None
    active = rule_store.active_rules(request.session_id)
    verdict = evaluate(active, request)
    if verdict is not None and verdict.behavior is RuleBehavior.DENY:
        rule_text = str(verdict.rule.rule)
        return request, Decision.deny(f"Denied by the session rule {rule_text}.",
                                      by=DecidedBy.SESSION_RULE, rule=rule_text)
    if verdict is not None and verdict.behavior is RuleBehavior.ASK:
        return request, None
    # The rule that covers it, as the person reads their rules: the one our matcher
    # allows on, or a path rule naming a sensitive file (which our matcher, like the
    # CLI, asks about under any rule). An explanation only, never an answer.
    covering = (verdict.rule if verdict is not None else rules.path_rule_covering(
        active, request.tool_name, request.tool_input, request.cwd or "."))
    if covering is None:
        return request, None
    rule_text = str(covering.rule)
    log.info("request %s: the agent asked although %s covers it; a person decides",
             request.request_id, rule_text)
    return request.model_copy(update={"covered_by_rule": rule_text}), None


def evaluate(session_rules: list[SessionRule],
             request: ApprovalRequest) -> rules.RuleVerdict | None:
    """The verdict of `session_rules` on `request` (None: no rule matches)."""
    return rules.evaluate(session_rules, request.tool_name, request.tool_input,
                          request.cwd or ".", add_dirs=request.add_dirs)


def deliverable_grant(request: ApprovalRequest, decision: Decision,
                      deliverable: UpdateCheck | None) -> Decision:
    """The grant without the updates the CLI would not receive (each logged)."""
    kept = []
    for update in decision.updates:
        problem = grants.grant_problem(update)
        if problem is None and deliverable is not None:
            problem = deliverable(update)
        if problem is None:
            kept.append(update)
        else:
            log.warning("request %s: not granted, %s: %s", request.request_id, problem,
                        update.describe())
    if len(kept) == len(decision.updates):
        return decision
    return decision.model_copy(update={"updates": tuple(kept)})


def sibling_outcome(granted: list[SessionRule], sibling: ApprovalRequest
                    ) -> ApprovalRequest | Decision | None:
    """What rules a person just `granted` mean for a request of the same session that was
    already waiting: a deny (one of them is a deny rule that covers it), the request
    marked "covered by your new rule" (an allow rule covers it; the person still
    decides), or None (they do not cover it, or it is already marked).

    Never an allow: the CLI asked before it held the rules, and our matcher is not the
    CLI (it may read a symlink, a path or a spelling otherwise).
    """
    if (not granted or sibling.session_id != granted[0].session_id
            or sibling.kind is not RequestKind.TOOL):
        return None
    verdict = evaluate(granted, sibling)
    if verdict is None or verdict.behavior is RuleBehavior.ASK:
        return None
    rule_text = str(verdict.rule.rule)
    if verdict.behavior is RuleBehavior.DENY:
        return Decision.deny(f"Denied by the session rule {rule_text}.",
                             by=DecidedBy.SESSION_RULE, rule=rule_text)
    if sibling.covered_by_rule is not None:
        return None  # (a rule the agent held already covers it: that explanation stays)
    return sibling.model_copy(update={"covered_by_rule": rule_text,
                                      "granted_while_waiting": True})
