""""Allow for this session" follows the input the person edited, not the agent's
original: the rule offered is the one for what will run (offscreen, real key presses)."""

from __future__ import annotations

from helpers.keys import press
from PySide6.QtCore import Qt

from qoder_desktop.domain.models import DecisionKind, PermissionSuggestion, RuleBehavior, RuleValue
from qoder_desktop.ui.dialogs import ApprovalDialog

CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = CTRL | Qt.KeyboardModifier.ShiftModifier
SUGGESTED = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(npm run test:*)"),),
                                 behavior=RuleBehavior.ALLOW, destination="localSettings")


def _edit(dialog: ApprovalDialog, qtbot, command: str) -> None:  # type: ignore[no-untyped-def]
    press(dialog, Qt.Key.Key_E, CTRL)
    dialog.json_editor.editor.selectAll()
    qtbot.keyClicks(dialog.json_editor.editor,
                    f'{{"command": "{command}", "description": "Run tests"}}')


def _rules(dialog: ApprovalDialog) -> list[str]:
    return [edit.text() for _index, _rule, edit in dialog.grants.rule_edits]


def test_the_session_rule_follows_the_edited_command(open_dialog, qtbot, make_request):  # type: ignore[no-untyped-def]
    request = make_request("Bash", {"command": "npm run test", "description": "Run tests"},
                           suggestions=(SUGGESTED,), cwd="/work/proj")
    dialog, decisions = open_dialog(ApprovalDialog(request))
    assert _rules(dialog) == ["Bash(npm run test:*)"]
    _edit(dialog, qtbot, "npm run lint")
    qtbot.waitUntil(lambda: _rules(dialog) == ["Bash(npm run lint)"])
    assert "input you edited" in dialog.grants.hint.text()
    qtbot.waitUntil(dialog.ui.allowSessionButton.isEnabled)
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    (decision,) = decisions
    assert decision.kind is DecisionKind.ALLOW_SESSION
    assert decision.final_input == {"command": "npm run lint", "description": "Run tests"}
    assert [(u.destination, u.rules) for u in decision.updates] == [
        ("session", (RuleValue(tool_name="Bash", rule_content="npm run lint"),))]


def test_an_edit_no_rule_can_cover_leaves_only_allow_once(open_dialog, qtbot, make_request):  # type: ignore[no-untyped-def]
    request = make_request("Bash", {"command": "npm run test", "description": "Run tests"},
                           suggestions=(SUGGESTED,), cwd="/work/proj")
    dialog, _decisions = open_dialog(ApprovalDialog(request))
    _edit(dialog, qtbot, "echo edited > hello.txt")
    qtbot.waitUntil(lambda: _rules(dialog) == [])
    assert not dialog.ui.allowSessionButton.isEnabled()
    assert "input you edited" in dialog.grants.hint.text()
    # Undoing the edit offers the agent's suggestion again.
    qtbot.mouseClick(dialog.json_editor.reset_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _rules(dialog) == ["Bash(npm run test:*)"])


def test_an_edit_that_keeps_the_command_keeps_the_agents_suggestion(  # type: ignore[no-untyped-def]
        open_dialog, qtbot, make_request):
    request = make_request("Bash", {"command": "npm run test", "description": "Run tests"},
                           suggestions=(SUGGESTED,), cwd="/work/proj")
    dialog, _decisions = open_dialog(ApprovalDialog(request))
    press(dialog, Qt.Key.Key_E, CTRL)
    dialog.json_editor.editor.selectAll()
    qtbot.keyClicks(dialog.json_editor.editor,
                    '{"command": "npm run test", "description": "Run the tests"}')
    qtbot.waitUntil(dialog.json_editor.is_edited)
    assert _rules(dialog) == ["Bash(npm run test:*)"]
    assert "input you edited" not in dialog.grants.hint.text()
