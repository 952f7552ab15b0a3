"""The desk's "allow for this session" section and the phone offer the same rules: both
read `rules.offer`, so what a grant offers cannot differ between them, and a change of
it reaches both."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from qoder_desktop.away.phone_view import request_view
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.rules import offer
from qoder_desktop.ui.dialogs.session_grants import SessionGrants

CWD = "/work/proj"


def suggested(*texts: str) -> PermissionSuggestion:
    return PermissionSuggestion(type="addRules", rules=tuple(RuleValue.parse(t) for t in texts),
                                behavior=RuleBehavior.ALLOW, destination="localSettings")


def call(tool: str, tool_input: dict[str, object], *suggestions: PermissionSuggestion,
         **fields: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s-1", backend=Backend.CLAUDE, tool_name=tool,
                           tool_input=tool_input, suggestions=suggestions, cwd=CWD,
                           **fields)  # type: ignore[arg-type]


def desk_offers(qtbot: QtBot, item: ApprovalRequest) -> list[str]:
    """The rules the approval dialog's session-grant section shows for `item`."""
    grants = SessionGrants()
    qtbot.addWidget(grants)
    grants.load(item)
    return [edit.text() for _, _, edit in grants.rule_edits]


def phone_offers(item: ApprovalRequest) -> list[str]:
    """The rules the phone's view of `item` offers."""
    return [suggestion["rule"] for suggestion in request_view(item, "")["suggestions"]]


@pytest.mark.parametrize("item", [
    call("Bash", {"command": "npm run test"}, suggested("Bash(npm run test:*)")),
    call("Bash", {"command": "npm run test"}),
    call("Bash", {"command": "npm test"}, suggested("Bash(npm test)", "Bash(npm ci)"),
         covered_by_rule="Bash(npm test)"),
    call("Bash", {"command": "echo " + "x" * offer.ANALYSIS_LIMIT}),
    call("Write", {"file_path": f"{CWD}/notes.md", "content": "x" * (offer.ANALYSIS_LIMIT + 1)}),
    call("WebFetch", {"url": "https://example.test/"},
         suggested("WebFetch(domain:" + "h" * offer.ANALYSIS_LIMIT + ")")),
    call("Bash", {"command": "make"}, suggested("Bash")),
], ids=["the CLI's rule", "our rule", "covered", "too large", "large file",
        "huge suggested rule", "whole tool"])
def test_the_desk_and_the_phone_offer_the_same_rules(qtbot: QtBot,
                                                     item: ApprovalRequest) -> None:
    assert desk_offers(qtbot, item) == phone_offers(item)


def test_what_a_grant_offers_changes_in_one_place_for_both(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    item = call("Bash", {"command": "npm run test:unit"})
    assert desk_offers(qtbot, item) == phone_offers(item) == ["Bash(npm run test:unit)"]
    monkeypatch.setattr(offer, "ANALYSIS_LIMIT", 10)  # one meaning, changed once
    assert desk_offers(qtbot, item) == phone_offers(item) == []
