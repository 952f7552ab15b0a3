"""The "allow for this session" section: it offers the CLI's rule (or our narrowest one),
lets the person narrow it but makes a broader rule an explicit choice, never offers a
switch that stops the asking, and sends exactly what the person left ticked."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.ui.dialogs.session_grants import SessionGrants

CWD = "/work/proj"
PREFIX = "Bash(npm run test:*)"


def rules(*texts: str, destination: str = "session") -> PermissionSuggestion:
    return PermissionSuggestion(type="addRules", rules=tuple(RuleValue.parse(t) for t in texts),
                                behavior=RuleBehavior.ALLOW, destination=destination)  # type: ignore[arg-type]


def request(command: str = "npm run test", *suggestions: PermissionSuggestion,
            **fields: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s-1", backend=Backend.CLAUDE, tool_name="Bash",
                           tool_input={"command": command}, suggestions=suggestions, cwd=CWD,
                           **fields)  # type: ignore[arg-type]


def section(qtbot: QtBot, item: ApprovalRequest) -> SessionGrants:
    grants = SessionGrants()
    qtbot.addWidget(grants)
    grants.load(item)
    grants.show()
    qtbot.waitExposed(grants)
    return grants


def shown_rules(grants: SessionGrants) -> list[str]:
    return [edit.text() for _, _, edit in grants.rule_edits]


def test_the_clis_rule_is_offered_for_the_session(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test", rules(PREFIX, destination="localSettings")))
    assert shown_rules(grants) == [PREFIX]
    assert grants.is_valid()
    assert grants.updates() == (rules(PREFIX),)
    assert "rest of this session" in grants.hint.text()


def test_without_a_suggestion_the_narrowest_rule_for_the_call_is_offered(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test"))
    assert shown_rules(grants) == ["Bash(npm run test)"]
    assert grants.updates() == (rules("Bash(npm run test)"),)


def test_a_narrowed_rule_is_what_is_sent(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test", rules(PREFIX)))
    grants.rule_edits[0][2].setText("Bash(npm run test -- --watch)")
    assert grants.is_valid() and not grants.confirm_broader.isVisible()
    assert grants.updates() == (rules("Bash(npm run test -- --watch)"),)


def test_a_broader_rule_needs_the_persons_explicit_tick(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test", rules(PREFIX)))
    with qtbot.waitSignal(grants.validity_changed) as changed:
        grants.rule_edits[0][2].setText("Bash(npm:*)")
    assert changed.args == [False]
    assert grants.updates() is None
    assert grants.confirm_broader.isVisible()
    assert "Rule 1 is broader than what the agent asked for" in grants.error_text()
    grants.confirm_broader.setChecked(True)
    assert grants.updates() == (rules("Bash(npm:*)"),)
    grants.rule_edits[0][2].setText(PREFIX)  # back to the agent's rule: the tick goes
    assert not grants.confirm_broader.isChecked()


def test_a_text_that_is_no_rule_is_refused(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test", rules(PREFIX)))
    grants.rule_edits[0][2].setText("Bash(npm run")
    assert not grants.is_valid() and grants.updates() is None
    assert "Rule 1 is not a rule" in grants.error_text()


def test_a_switch_that_stops_the_asking_is_never_offered(qtbot: QtBot) -> None:
    bypass = PermissionSuggestion(type="setMode", mode="bypassPermissions", destination="session")
    grants = section(qtbot, request("npm run test", rules(PREFIX), bypass))
    assert grants.refused == [bypass]
    assert grants.refused_note.isVisible() and "Not offered" in grants.refused_note.text()
    assert all(update is not bypass for update, _ in grants.kept_aside)
    assert grants.updates() == (rules(PREFIX),)


def test_an_extra_update_is_sent_only_when_ticked(qtbot: QtBot) -> None:
    folder = PermissionSuggestion(type="addDirectories", directories=("/work/other",),
                                  destination="session")
    grants = section(qtbot, request("npm run test", rules(PREFIX), folder))
    [(update, box)] = grants.kept_aside
    assert update == folder and isinstance(box, QCheckBox) and not box.isChecked()
    assert grants.updates() == (rules(PREFIX),)
    box.setChecked(True)
    assert grants.updates() == (rules(PREFIX), folder)


def test_a_malformed_update_is_named_not_offered(qtbot: QtBot) -> None:
    empty = PermissionSuggestion(type="addDirectories", directories=(), destination="session")
    grants = section(qtbot, request("npm run test", rules(PREFIX), empty))
    assert grants.kept_aside == []
    assert grants.malformed_note.isVisible()
    assert "suggested it malformed" in grants.malformed_note.text()


def test_saving_to_the_project_changes_the_destination(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test", rules(PREFIX),
                                    project_settings_file=f"{CWD}/.claude/settings.local.json"))
    assert grants.save_to_project.isVisible()
    assert ".claude/settings.local.json" in grants.save_to_project.text()
    grants.save_to_project.setChecked(True)
    assert grants.updates() == (rules(PREFIX, destination="localSettings"),)


def test_a_rule_that_already_covers_the_call_is_named_not_offered_again(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test", rules(PREFIX), covered_by_rule=PREFIX))
    assert grants.rule_edits == [] and not grants.is_valid()
    assert f"Your session rule {PREFIX} already covers this call" in grants.hint.text()


def test_an_edited_input_gets_the_rule_for_what_will_run(qtbot: QtBot) -> None:
    grants = section(qtbot, request("npm run test", rules(PREFIX)))
    grants.follow_input({"command": "npm run lint"})
    assert shown_rules(grants) == ["Bash(npm run lint)"]
    assert "input you edited" in grants.hint.text()
    grants.follow_input(None)  # not valid JSON: nothing changes
    assert shown_rules(grants) == ["Bash(npm run lint)"]
    grants.follow_input({"command": "npm run test"})  # the edit undone
    assert shown_rules(grants) == [PREFIX]


def test_a_section_shows_one_request_once(qtbot: QtBot) -> None:
    grants = section(qtbot, request())
    with pytest.raises(RuntimeError, match="one request, once"):
        grants.load(request())
