"""What the agent's CLI receives for a decision (the gateway's tool result and the hook's
``decision`` alike): an allow runs exactly the input the person saw, its grants go to
the CLI for this session only, a revocation rides only on an allow, and everything
else is a deny with a message."""

from __future__ import annotations

import pytest

from qoder_desktop.approval.source import permission_result
from qoder_desktop.domain.models import (
    Decision,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)

GRANT = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(make:*)"),),
                             behavior=RuleBehavior.ALLOW, destination="localSettings")
REVOKED = (RuleValue.parse("Bash(rm:*)"),)


def test_an_allow_runs_the_input_as_approved() -> None:
    assert permission_result(Decision.allow_once({"command": "make test"})) == {
        "behavior": "allow", "updatedInput": {"command": "make test"}}


def test_a_grant_goes_to_the_cli_for_this_session_only() -> None:
    """A suggestion to save the rule in the project's settings is sent as a session
    rule: nothing the person allows outlives the agent's run."""
    result = permission_result(Decision.allow_session({"command": "make"}, (GRANT,)))
    assert result["updatedPermissions"] == [
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make:*"}],
         "behavior": "allow", "destination": "session"}]


def test_a_revocation_rides_on_the_next_allow() -> None:
    result = permission_result(Decision.allow_once({"command": "ls"}), REVOKED)
    assert result["updatedPermissions"] == [
        {"type": "removeRules", "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}],
         "behavior": "allow", "destination": "session"}]


@pytest.mark.parametrize(("decision", "expected"), [
    (Decision.deny("Not on Fridays."), {"behavior": "deny", "message": "Not on Fridays."}),
    (Decision.deny("Stop here.", interrupt=True),
     {"behavior": "deny", "message": "Stop here.", "interrupt": True}),
    (Decision.error("Qoder Desktop could not record the request, so it was denied: disk"),
     {"behavior": "deny",
      "message": "Qoder Desktop could not record the request, so it was denied: disk"}),
])
def test_everything_else_is_a_deny_with_its_message_and_no_revocation(
        decision: Decision, expected: dict[str, object]) -> None:
    """A revocation in a deny would be ignored by the CLI: it waits for an allow."""
    assert permission_result(decision, REVOKED) == expected


def test_a_withdrawn_request_is_denied_with_a_message() -> None:
    result = permission_result(Decision.withdrawn())
    assert result["behavior"] == "deny" and result["message"].strip()
    assert "updatedInput" not in result
