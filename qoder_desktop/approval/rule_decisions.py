"""What the session rules decide about a request, for the broker.

One authority for grants (see docs/DESIGN-NOTES.md, "Who decides"): every "allow for
this session" goes to the agent's CLI as a `session` update, so the CLI holds the
grant and decides matching calls itself. A new request that reaches us although one of
our allow rules covers it was escalated by the CLI on purpose (a sensitive file, a path
outside the workspace, a spelling it treats as different): a person sees it, told which
rule covers it. Our allow rules decide alone only for requests that were already
pending when the grant was made (`sibling_decision`), where the CLI never saw the rule.
Deny rules always decide (stricter than the CLI is safe).
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
from qoder_desktop.rules import cli_model, grants
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
    verdict = evaluate(rule_store.active_rules(request.session_id), request)
    if verdict is None or verdict.behavior is RuleBehavior.ASK:
        return request, None
    rule_text = str(verdict.rule.rule)
    if verdict.behavior is RuleBehavior.DENY:
        return request, Decision.deny(f"Denied by the session rule {rule_text}.",
                                      by=DecidedBy.SESSION_RULE, rule=rule_text)
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


def allow_rules(granted: list[SessionRule]) -> list[SessionRule]:
    """The allow rules among rules just granted."""
    return [rule for rule in granted if rule.behavior is RuleBehavior.ALLOW]


def sibling_decision(allow: list[SessionRule], sibling: ApprovalRequest) -> Decision | None:
    """An allow for a request of the grant's session that was pending when the `allow`
    rules were granted, where they cover it and the CLI would allow it under them too
    (`rules.matcher` and `rules.cli_model` both say allow); None otherwise."""
    if sibling.session_id != allow[0].session_id or sibling.kind is not RequestKind.TOOL:
        return None
    verdict = evaluate(allow, sibling)
    if verdict is None or verdict.behavior is not RuleBehavior.ALLOW:
        return None
    predicted, reason = cli_model.predict(allow, sibling.tool_name, sibling.tool_input,
                                          sibling.cwd or ".", sibling.add_dirs)
    if predicted != "allow":
        log.info("request %s: %s covers it, but the CLI would not allow it (%s); a person "
                 "decides", sibling.request_id, verdict.rule.rule, reason)
        return None
    return Decision.allow_once(dict(sibling.tool_input), by=DecidedBy.SESSION_RULE,
                               rule=str(verdict.rule.rule))
