"""The approval dialog, driven by real key presses and clicks (offscreen)."""

from __future__ import annotations

import json
import os

import pytest
from helpers.keys import press
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QCheckBox, QLabel, QWidget

from qoder_desktop.domain.models import (
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.shell.risk import RiskKind
from qoder_desktop.ui.dialogs import ApprovalDialog, dialog_for
from qoder_desktop.ui.dialogs.arming import ArmingGate

CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = CTRL | Qt.KeyboardModifier.ShiftModifier
NPM_RULE = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(npm run test:*)"),),
                                behavior=RuleBehavior.ALLOW, destination="localSettings")
ADD_DIR = PermissionSuggestion(type="addDirectories", directories=("/opt/data",),
                               destination="session")
BYPASS = PermissionSuggestion(type="setMode", mode="bypassPermissions", destination="session")


@pytest.fixture
def bash(make_request):
    def build(command: str = "npm run test", **fields):
        fields.setdefault("suggestions", (NPM_RULE,))
        fields.setdefault("cwd", "/work/proj")
        return make_request("Bash", {"command": command, "description": "Run tests"}, **fields)
    return build


def test_title_who_and_plain_text_labels(open_dialog, bash):
    request = bash(title="<b>Run</b> <img src='/etc/passwd'>", agent_id="agent-7",
                   description="<i>desc</i>", decision_reason="because\u202e",
                   blocked_path="/etc/shadow")
    dialog, _ = open_dialog(ApprovalDialog(request))
    assert dialog.windowTitle() == "Approve Bash — demo"
    assert dialog.ui.titleLabel.text() == "<b>Run</b> <img src='/etc/passwd'>"
    assert "sub-agent agent-7" in dialog.ui.whoLabel.text()
    assert dialog.ui.reasonLabel.text() == "because⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩"
    assert dialog.ui.blockedLabel.text() == "/etc/shadow"
    for label in dialog.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()
    assert all(not widget.toolTip() for widget in dialog.findChildren(QWidget))


def test_a_remote_hosts_request_names_the_host(open_dialog, bash):
    dialog, _ = open_dialog(ApprovalDialog(bash(host="box-a")))

    assert dialog.ui.whoLabel.text().startswith("Host: box-a")


def test_a_local_request_names_no_host(open_dialog, bash):
    dialog, _ = open_dialog(ApprovalDialog(bash()))

    assert "Host:" not in dialog.ui.whoLabel.text()


def test_a_call_a_session_rule_covers_says_why_it_is_asked_again(open_dialog, bash):
    request = bash(decision_reason="sensitive file", covered_by_rule="Edit(./**)")
    dialog, _ = open_dialog(ApprovalDialog(request))
    text = dialog.ui.reasonLabel.text()
    assert text.startswith("sensitive file\n")
    assert "Your session rule Edit(./**) covers this call, but the agent asked anyway" in text
    assert dialog.ui.reasonLabel.isVisibleTo(dialog)


def test_focus_starts_on_the_deny_reason(open_dialog, bash, short_arming):
    dialog, _ = open_dialog(ApprovalDialog(bash()))
    assert QApplication.focusWidget() is dialog.ui.denyReasonEdit
    assert dialog.gate.delay_ms == short_arming < 400  # not an arming test: short delay


@pytest.mark.arming
def test_arming_delay(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()), arm=False)
    assert dialog.gate.delay_ms == 400  # the app's delay: arming tests keep it
    assert not dialog.is_armed()
    assert not dialog.ui.allowOnceButton.isEnabled()
    press(dialog, Qt.Key.Key_Return, CTRL)
    press(dialog, Qt.Key.Key_Escape)
    qtbot.mouseClick(dialog.ui.allowOnceButton, Qt.MouseButton.LeftButton)
    assert decisions == [] and dialog.isVisible()
    qtbot.waitUntil(dialog.is_armed, timeout=2000)
    assert dialog.ui.allowOnceButton.isEnabled()
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]
    assert decisions[0].final_input == {"command": "npm run test", "description": "Run tests"}


@pytest.mark.arming
def test_a_ctrl_key_held_from_before_keeps_the_dialog_unarmed_until_released(
        open_dialog, qtbot, bash, monkeypatch):
    """A stuck or auto-repeating Ctrl+Return from another window approves nothing.

    Offscreen Qt has no keyboard to ask, so the platform query is stood in for here;
    the desktop check runs the real one under X11.
    """
    held = [True]
    monkeypatch.setattr(ArmingGate, "modifiers_held", staticmethod(lambda: held[0]))
    monkeypatch.setattr(ArmingGate, "held_modifier_names",
                        staticmethod(lambda: "Ctrl" if held[0] else ""))
    dialog, decisions = open_dialog(ApprovalDialog(bash()), arm=False)
    assert not dialog.held_note.isVisible()  # nothing to say during the delay itself
    buttons_at = dialog.ui.allowOnceButton.mapTo(dialog, QPoint(0, 0))
    height = dialog.height()
    content = [(w, w.geometry()) for w in (dialog.ui.detailTabs, dialog.ui.headerScroll)]
    qtbot.wait(700)
    assert not dialog.is_armed()
    assert dialog.held_note.isVisible()
    QApplication.processEvents()
    # Its line was kept: nothing jumps when it appears.
    assert dialog.ui.allowOnceButton.mapTo(dialog, QPoint(0, 0)) == buttons_at
    assert dialog.height() == height
    assert [w.geometry() for w, _ in content] == [g for _, g in content]
    assert dialog.held_note.text() == "Release Ctrl to enable the buttons and keys."
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions == []
    held[0] = False
    qtbot.waitUntil(dialog.is_armed, timeout=1000)
    assert not dialog.held_note.isVisible()
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]


@pytest.mark.arming
def test_inert_deny_and_stop_looks_as_disabled_as_the_others(open_dialog, qtbot, bash):
    """During arming "Deny and stop" is grey like every button, not red and live-looking."""
    dialog, _ = open_dialog(ApprovalDialog(bash()), arm=False)
    stop, deny = dialog.ui.denyStopButton, dialog.ui.denyButton
    assert not stop.isEnabled() and not deny.isEnabled()

    def text_colour(button):  # the colour the button's label is painted in
        image = button.grab().toImage()
        pixels = [image.pixelColor(x, y) for x in range(image.width())
                  for y in range(image.height())]
        return max(pixels, key=lambda c: c.red() - c.green())

    def reddish(colour):
        return colour.red() - colour.green() > 60

    assert not reddish(text_colour(stop))
    qtbot.waitUntil(dialog.is_armed, timeout=2000)
    assert reddish(text_colour(stop))  # armed: red again


def test_ctrl_return_twice_emits_once(open_dialog, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    press(dialog, Qt.Key.Key_Return, CTRL)
    press(dialog, Qt.Key.Key_Return, CTRL)
    press(dialog, Qt.Key.Key_Escape)
    dialog.ui.denyButton.click()
    dialog.close()
    assert len(decisions) == 1 and not dialog.isVisible()


def test_escape_denies_with_typed_reason(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    qtbot.keyClicks(dialog.ui.denyReasonEdit, "use yarn instead")
    press(dialog.ui.denyReasonEdit, Qt.Key.Key_Return)  # plain Return does nothing
    assert decisions == []
    press(dialog.ui.denyReasonEdit, Qt.Key.Key_Escape)
    assert [(d.kind, d.message) for d in decisions] == [(DecisionKind.DENY, "use yarn instead")]


def test_escape_without_reason_uses_default(open_dialog, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    press(dialog, Qt.Key.Key_Escape)
    assert decisions[0].kind is DecisionKind.DENY and decisions[0].message.strip()


def test_closing_the_window_denies_once(open_dialog, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()), arm=False)
    dialog.close()
    dialog.close()
    assert [d.kind for d in decisions] == [DecisionKind.DENY]


def test_deny_and_stop(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    qtbot.mouseClick(dialog.ui.denyStopButton, Qt.MouseButton.LeftButton)
    assert decisions[0].kind is DecisionKind.DENY_INTERRUPT and decisions[0].interrupt


def test_ctrl_e_focuses_the_json_editor(open_dialog, bash):
    dialog, _ = open_dialog(ApprovalDialog(bash()))
    assert dialog.ui.detailTabs.currentWidget() is dialog.ui.inspectTab
    press(dialog, Qt.Key.Key_E, CTRL)
    assert dialog.ui.detailTabs.currentWidget() is dialog.ui.inputTab
    assert QApplication.focusWidget() is dialog.json_editor.editor


def test_ctrl_e_from_the_deny_reason_then_the_edited_input_is_allowed(open_dialog, qtbot, bash):
    """On X11 a line edit takes Ctrl+E as "end of line"; the dialog's Ctrl+E still wins.

    Without that, a person types the new JSON into the deny reason and Ctrl+Return
    allows the original input.
    """
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    qtbot.keyClicks(dialog.ui.denyReasonEdit, "maybe")
    press(dialog, Qt.Key.Key_E, CTRL)
    editor = dialog.json_editor.editor
    assert QApplication.focusWidget() is editor
    editor.selectAll()
    qtbot.keyClicks(editor, '{"command": "npm run test:unit"}')
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]
    assert decisions[0].final_input == {"command": "npm run test:unit"}
    assert dialog.ui.denyReasonEdit.text() == "maybe"


@pytest.mark.parametrize("field", ["deny reason", "json editor", "session rule"])
def test_every_ctrl_chord_works_whatever_has_focus(open_dialog, qtbot, bash, field):
    fields = {"deny reason": lambda d: d.ui.denyReasonEdit,
              "json editor": lambda d: d.json_editor.editor,
              "session rule": lambda d: d.grants.rule_edits[0][2]}
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    widget = fields[field](dialog)
    dialog.ui.detailTabs.setCurrentWidget(dialog.ui.inputTab)
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)
    press(dialog, Qt.Key.Key_E, CTRL)
    assert QApplication.focusWidget() is dialog.json_editor.editor
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_SESSION]


def tick(qtbot, box):
    """Click a check box on its indicator."""
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    assert box.isChecked()


def _type_at_end(qtbot, editor, text):
    editor.setFocus()
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor, text)


def test_broken_json_disables_allow_and_names_line_and_column(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    editor = dialog.json_editor.editor
    _type_at_end(qtbot, editor, ",")
    qtbot.waitUntil(lambda: not dialog.ui.allowOnceButton.isEnabled())
    assert not dialog.ui.allowSessionButton.isEnabled()
    assert dialog.ui.denyButton.isEnabled()
    error = dialog.json_editor.status.text()
    assert "line 4, column 2" in error
    assert dialog.json_editor.status.isVisibleTo(dialog.json_editor)
    assert "invalid" in dialog.ui.detailTabs.tabText(1)
    press(dialog, Qt.Key.Key_Return, CTRL)
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert decisions == []
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    qtbot.waitUntil(dialog.ui.allowOnceButton.isEnabled)
    assert not dialog.json_editor.status.isVisibleTo(dialog.json_editor)
    assert "invalid" not in dialog.ui.detailTabs.tabText(1)
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions[0].kind is DecisionKind.ALLOW_ONCE


def test_non_object_json_is_invalid(open_dialog, qtbot, bash):
    dialog, _ = open_dialog(ApprovalDialog(bash()))
    dialog.json_editor.editor.setPlainText("[1, 2]")
    qtbot.waitUntil(lambda: not dialog.ui.allowOnceButton.isEnabled())
    assert "must be a JSON object" in dialog.json_editor.error_text()


def test_edited_input_is_what_runs_with_marker_diff_and_reset(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    editor = dialog.json_editor
    assert not editor.is_edited() and not editor.edited_label.isVisibleTo(editor)
    text = editor.editor.toPlainText().replace("npm run test", "npm run test:unit")
    press(dialog, Qt.Key.Key_E, CTRL)
    editor.editor.selectAll()
    qtbot.keyClicks(editor.editor, text.replace("\n", " "))
    qtbot.waitUntil(editor.edited_label.isVisible)
    assert editor.reset_button.isEnabled()
    diff = editor.diff_view.toPlainText()
    assert '-  "command": "npm run test",' in diff
    assert '+  "command": "npm run test:unit",' in diff
    qtbot.waitUntil(lambda: "npm run test:unit" in dialog.risk_lens.shown_text())
    qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not editor.edited_label.isVisibleTo(editor))
    assert json.loads(editor.editor.toPlainText())["command"] == "npm run test"
    editor.editor.setPlainText(text)
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions[0].final_input["command"] == "npm run test:unit"


def test_narrowed_session_rule_is_sent_with_destination_session(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    _index, _original, edit = dialog.grants.rule_edits[0]
    assert edit.text() == "Bash(npm run test:*)"
    edit.selectAll()
    qtbot.keyClicks(edit, "Bash(npm run test --watch)")
    assert dialog.ui.allowSessionButton.isEnabled()
    assert not dialog.grants.confirm_broader.isVisible()
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    (decision,) = decisions
    assert decision.kind is DecisionKind.ALLOW_SESSION
    assert [(u.destination, u.rules) for u in decision.updates] == [
        ("session", (RuleValue(tool_name="Bash", rule_content="npm run test --watch"),))]


def test_invalid_rule_disables_session_allow(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    edit = dialog.grants.rule_edits[0][2]
    edit.selectAll()
    qtbot.keyClicks(edit, "not a rule(")
    assert not dialog.ui.allowSessionButton.isEnabled()
    assert "not a rule" in dialog.grants.error_text() and dialog.grants.error.isVisible()
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert decisions == []
    assert dialog.ui.allowOnceButton.isEnabled()


@pytest.mark.parametrize("text", [
    "Bash", "Write(npm run test)", "Bash(rm -rf /)", "Bash(npm run test*)",
    "Bash(npm run testx:*)", "Bash(npm run test:unit)", "Bash(npm run:*)",
])
def test_broader_rule_needs_an_explicit_confirmation(open_dialog, qtbot, bash, text):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    edit = dialog.grants.rule_edits[0][2]
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    assert not dialog.ui.allowSessionButton.isEnabled()
    assert "broader than what the agent asked for" in dialog.grants.error_text()
    assert dialog.grants.broader_note.isVisible()
    confirm = dialog.grants.confirm_broader
    assert confirm.isVisible() and not confirm.isChecked()
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert decisions == []
    tick(qtbot, confirm)
    assert dialog.ui.allowSessionButton.isEnabled()
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert decisions[0].updates[0].rules == (RuleValue.parse(text),)


def test_confirmation_is_withdrawn_when_the_rule_is_narrow_again(open_dialog, qtbot, bash):
    dialog, _ = open_dialog(ApprovalDialog(bash()))
    edit = dialog.grants.rule_edits[0][2]
    edit.selectAll()
    qtbot.keyClicks(edit, "Bash(npm run:*)")
    tick(qtbot, dialog.grants.confirm_broader)
    edit.selectAll()
    qtbot.keyClicks(edit, "Bash(npm run test:*)")
    assert not dialog.grants.confirm_broader.isVisible()
    assert not dialog.grants.confirm_broader.isChecked()
    edit.selectAll()
    qtbot.keyClicks(edit, "Bash(npm:*)")
    assert not dialog.ui.allowSessionButton.isEnabled()


def test_editor_path_rule_to_a_sibling_folder_is_broader(open_dialog, qtbot, make_request):
    suggestion = PermissionSuggestion(
        type="addRules", rules=(RuleValue.parse("Edit(//home/u/src/**)"),),
        behavior=RuleBehavior.ALLOW, destination="session")
    request = make_request("Edit", {"file_path": "/home/u/src/a.py", "old_string": "a",
                                    "new_string": "b"}, suggestions=(suggestion,),
                           cwd="/home/u")
    dialog, _ = open_dialog(ApprovalDialog(request))
    edit = dialog.grants.rule_edits[0][2]
    edit.selectAll()
    qtbot.keyClicks(edit, "Edit(//home/u/src-evil/**)")
    assert dialog.grants.confirm_broader.isVisible()
    assert not dialog.ui.allowSessionButton.isEnabled()
    edit.selectAll()
    qtbot.keyClicks(edit, "Edit(//home/u/src/pkg/**)")
    assert not dialog.grants.confirm_broader.isVisible()
    assert dialog.ui.allowSessionButton.isEnabled()


def test_whole_tool_suggestion_is_never_prefilled(open_dialog, qtbot, bash):
    whole = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash"),),
                                 behavior=RuleBehavior.ALLOW, destination="localSettings")
    dialog, decisions = open_dialog(ApprovalDialog(bash("git status", suggestions=(whole,))))
    assert [e.text() for _i, _r, e in dialog.grants.rule_edits] == ["Bash(git status)"]
    (update, box), = dialog.grants.kept_aside
    assert update.rules == (RuleValue.parse("Bash"),) and not box.isChecked()
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert [u.rules for u in decisions[0].updates] == [(RuleValue.parse("Bash(git status)"),)]


def test_whole_tool_suggestion_is_sent_only_when_ticked(open_dialog, qtbot, bash):
    whole = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash"),),
                                 behavior=RuleBehavior.ALLOW, destination="localSettings")
    dialog, decisions = open_dialog(ApprovalDialog(bash("git status", suggestions=(whole,))))
    (_update, box), = dialog.grants.kept_aside
    tick(qtbot, box)
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    sent = [(u.rules, u.destination) for u in decisions[0].updates]
    assert sent == [((RuleValue.parse("Bash(git status)"),), "session"),
                    ((RuleValue.parse("Bash"),), "session")]


def test_kept_aside_unticked_and_only_sent_when_ticked(open_dialog, qtbot, bash):
    request = bash(suggestions=(NPM_RULE, ADD_DIR, BYPASS))
    dialog, decisions = open_dialog(ApprovalDialog(request))
    boxes = [box for _update, box in dialog.grants.kept_aside]
    assert len(boxes) == 1 and not boxes[0].isChecked()
    assert "/opt/data" in boxes[0].text()
    texts = [box.text() for box in dialog.findChildren(QCheckBox)]
    assert not any("bypass" in text.lower() for text in texts)
    assert "bypassPermissions" in dialog.grants.refused_note.text()
    assert dialog.grants.refused_note.isVisible()
    tick(qtbot, boxes[0])
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert [u.type for u in decisions[0].updates] == ["addRules", "addDirectories"]


def test_kept_aside_not_sent_when_unticked(open_dialog, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash(suggestions=(NPM_RULE, ADD_DIR))))
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert [u.type for u in decisions[0].updates] == ["addRules"]


def test_save_to_project_is_offered_only_where_the_session_loads_that_file(open_dialog, bash):
    dialog, _ = open_dialog(ApprovalDialog(bash(project_settings_file=None)))
    assert not dialog.grants.save_to_project.isVisibleTo(dialog)


def test_save_to_project_names_the_backends_file_and_uses_local_settings(
        open_dialog, qtbot, bash):
    request = bash(cwd="/work/project",
                   project_settings_file="/work/project/.qoder/settings.local.json")
    dialog, decisions = open_dialog(ApprovalDialog(request))
    check = dialog.grants.save_to_project
    assert check.isVisibleTo(dialog) and not check.isChecked()
    assert check.text().endswith("(.qoder/settings.local.json)")
    tick(qtbot, check)
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert [u.destination for u in decisions[0].updates] == ["localSettings"]


def test_own_rule_when_no_suggestion(open_dialog, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash("git status", suggestions=())))
    assert dialog.grants.rule_edits[0][2].text() == "Bash(git status)"
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert decisions[0].updates[0].rules == (RuleValue(tool_name="Bash",
                                                       rule_content="git status"),)


def test_no_rule_possible_disables_session_allow(open_dialog, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash("ls *.py", suggestions=())))
    assert dialog.grants.rule_edits == []
    assert not dialog.ui.allowSessionButton.isEnabled()
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert decisions == []


def test_risk_lens_points_at_the_risky_parts(open_dialog, bash):
    command = ("sudo rm -rf build && curl -s x | sh > /etc/x; python -c 'import os' "
               "$(whoami)")
    dialog, _ = open_dialog(ApprovalDialog(bash(command)))
    lens = dialog.risk_lens
    found = {(f.kind, command[f.start:f.end]) for f in lens.findings}
    for expected in [(RiskKind.SUDO, "sudo"), (RiskKind.RECURSIVE_DELETE, "rm -rf"),
                     (RiskKind.PIPE_TO_INTERPRETER, "| sh"),
                     (RiskKind.REDIRECTION, "> /etc/x"),
                     (RiskKind.INTERPRETER, "python -c"),
                     (RiskKind.SUBSTITUTION, "$(whoami)")]:
        assert expected in found
    assert lens.findings_list.count() == len(lens.findings)
    cursor = QTextCursor(lens.command_view.document())
    cursor.setPosition(command.index("sudo") + 1)
    assert cursor.charFormat().background().color().name() != "#000000"


def test_hidden_characters_are_shown_and_named(open_dialog, bash):
    command = "echo safe\u202e; rm x\x1b[2K\rok"
    dialog, _ = open_dialog(ApprovalDialog(bash(command)))
    shown = dialog.risk_lens.shown_text()
    for marker in ("⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩", "⟨ESC⟩", "⟨CR⟩"):
        assert marker in shown
    assert not any(char in shown for char in "\u202e\x1b\r")
    json_text = dialog.json_editor.editor.toPlainText()
    assert "\\u202e" in json_text and "\\u001b" in json_text and "\\r" in json_text
    assert not any(char in json_text for char in "\u202e\x1b\r")
    assert json.loads(json_text)["command"] == command
    warning = dialog.ui.hiddenWarning
    assert warning.isVisible()
    for name in ("U+202E RIGHT-TO-LEFT OVERRIDE", "ESC", "CR"):
        assert name in warning.text()


def test_no_warning_without_hidden_characters(open_dialog, bash):
    dialog, _ = open_dialog(ApprovalDialog(bash()))
    assert not dialog.ui.hiddenWarning.isVisible()


def test_write_diff_against_a_real_file(open_dialog, make_request, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    request = make_request("Write", {"file_path": "notes.txt", "content": "alpha\ngamma\n"},
                           cwd=str(tmp_path))
    dialog, _ = open_dialog(ApprovalDialog(request))
    text = dialog.diff_panel.text()
    assert "-beta" in text and "+gamma" in text and " alpha" in text
    assert dialog.ui.detailTabs.tabText(0) == "Changes"


def test_write_new_file(open_dialog, make_request, tmp_path):
    request = make_request("Write", {"file_path": str(tmp_path / "new.txt"), "content": "hi\n"})
    dialog, _ = open_dialog(ApprovalDialog(request))
    assert "New file" in dialog.diff_panel.note.text() and "+hi" in dialog.diff_panel.text()


def test_edit_diff_and_not_found(open_dialog, qtbot, make_request, tmp_path):
    path = tmp_path / "app.py"
    path.write_text("x = 1\ny = 2\n")
    request = make_request("Edit", {"file_path": str(path), "old_string": "y = 2",
                                    "new_string": "y = 3"})
    dialog, _ = open_dialog(ApprovalDialog(request))
    assert "-y = 2" in dialog.diff_panel.text() and "+y = 3" in dialog.diff_panel.text()
    text = dialog.json_editor.editor.toPlainText().replace("y = 2", "z = 9")
    dialog.json_editor.editor.setPlainText(text)
    qtbot.waitUntil(lambda: "not found" in dialog.diff_panel.note.text())


def test_fifo_in_model_text_is_never_opened(open_dialog, make_request, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    request = make_request("Write", {"file_path": str(fifo), "content": "x"},
                           title=f"<b>x</b><img src='{fifo}'>", description=f"<img src='{fifo}'>")
    dialog, _ = open_dialog(ApprovalDialog(request))
    dialog.grab()
    assert "not a regular file" in dialog.diff_panel.note.text()
    with pytest.raises(OSError) as info:
        os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    assert info.value.errno == 6  # ENXIO: nobody ever opened it for reading


def test_withdraw_closes_and_late_clicks_do_nothing(open_dialog, qtbot, bash):
    dialog, decisions = open_dialog(ApprovalDialog(bash()))
    dialog.withdraw()
    assert not dialog.isVisible() and dialog.is_withdrawn()
    qtbot.mouseClick(dialog.ui.allowOnceButton, Qt.MouseButton.LeftButton)
    dialog.ui.allowOnceButton.click()
    press(dialog, Qt.Key.Key_Return, CTRL)
    dialog.allow_once()
    dialog.close()
    assert decisions == []


def test_factory_builds_approval_dialog(bash, qtbot):
    dialog = dialog_for(bash())
    qtbot.addWidget(dialog)
    assert isinstance(dialog, ApprovalDialog)


def test_large_diff_opens(open_dialog, make_request, tmp_path):
    """A 20 000-line change renders (colouring stops after a cap) without trouble."""
    path = tmp_path / "big.txt"
    path.write_text("".join(f"old {i}\n" for i in range(20_000)))
    content = "".join(f"new {i}\n" for i in range(20_000))
    dialog, _ = open_dialog(ApprovalDialog(make_request(
        "Write", {"file_path": str(path), "content": content})))
    dialog.grab()
    assert dialog.diff_panel.view.document().blockCount() > 40_000
