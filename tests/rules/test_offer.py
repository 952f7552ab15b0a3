"""What "allow for this session" offers: the CLI's narrow rules for this session, our own
rule when it suggested none, never the rule that already covers the call, nothing for an
input too large to analyse."""

from __future__ import annotations

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.rules.offer import ANALYSIS_LIMIT, session_offer


def bash(command: str, **fields: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s1", backend=Backend.CLAUDE, tool_name="Bash",
                           tool_input={"command": command}, cwd="/work", **fields)


def test_the_clis_rules_go_to_this_session() -> None:
    suggestion = PermissionSuggestion(type="addRules", behavior=RuleBehavior.ALLOW,
                                      rules=(RuleValue.parse("Bash(npm run test:*)"),),
                                      destination="localSettings")
    offer = session_offer(bash("npm run test", suggestions=(suggestion,)))
    assert [str(r) for r in offer.rules()] == ["Bash(npm run test:*)"]
    assert offer.grants[0].destination == "session"


def test_the_covering_rule_is_named_not_offered_again() -> None:
    offer = session_offer(bash("npm test", covered_by_rule="Bash(npm test)"))
    assert offer.rules() == [] and offer.already == "Bash(npm test)"


def test_a_command_too_large_to_analyse_gets_no_rule() -> None:
    offer = session_offer(bash("echo " + "x" * ANALYSIS_LIMIT))
    assert offer.too_large and offer.rules() == []
