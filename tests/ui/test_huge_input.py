"""Inputs of a megabyte and more: shown in pieces, edited byte-exactly, never analysed
past the bound, hidden characters flagged throughout (a 4 MiB input blocks the loop at most
100 ms)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from helpers.keys import press
from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QColor, QTextCursor

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.rules.offer import ANALYSIS_LIMIT
from qoder_desktop.ui.dialogs import ApprovalDialog
from qoder_desktop.ui.dialogs.inspect_views import RiskLensView
from qoder_desktop.ui.widgets.json_editor import JsonEditor
from qoder_desktop.ui.widgets.large_text import DISPLAY_CHUNK, unified_linear

MIB = 1024 * 1024


def bash(command: str, **extra: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s", session_name="demo", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp",
                           **extra)  # type: ignore[arg-type]


def _longest_block(editor: JsonEditor) -> int:
    block, longest = editor.editor.document().begin(), 0
    while block.isValid():
        longest = max(longest, block.length())
        block = block.next()
    return longest


def test_a_megabyte_word_is_shown_in_pieces_and_reads_back_exactly(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = JsonEditor()
    qtbot.addWidget(editor)
    command = ("a\u00a0b\u200b" + "y" * 5000) * 200
    editor.set_value({"command": command})
    assert editor.is_loading() and editor.editor.isReadOnly()
    assert editor.value() == {"command": command} and not editor.is_edited()
    qtbot.waitUntil(lambda: not editor.is_loading())
    assert not editor.editor.isReadOnly()
    assert _longest_block(editor) <= DISPLAY_CHUNK + 1
    assert not editor.is_edited()
    assert editor.value() == {"command": command}
    assert "\\u00a0" in editor.editor.toPlainText()  # still shown as an escape


def test_typing_into_a_huge_input_changes_exactly_that_character(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = JsonEditor()
    qtbot.addWidget(editor)
    command = "rm\u00a0-rf " + "z" * MIB
    editor.set_value({"command": command})
    editor.show()
    qtbot.waitUntil(lambda: not editor.is_loading())
    cursor = editor.editor.textCursor()
    cursor.setPosition(editor.editor.toPlainText().rindex('"'))
    editor.editor.setTextCursor(cursor)
    qtbot.keyClicks(editor.editor, "q")
    assert editor.value() == {"command": command + "q"}
    assert editor.is_edited()
    qtbot.waitUntil(lambda: "unchanged characters" in editor.diff_view.toPlainText())
    lines = editor.diff_view.toPlainText().splitlines()
    assert len(lines) < 20  # the change with its context, not two megabyte lines
    [removed] = [line for line in lines if line.startswith("-[")]
    [added] = [line for line in lines if line.startswith("+[")]
    assert "unchanged characters" in removed and removed.endswith('zz"')
    assert added.endswith('zzq"')
    editor.editor.undo()
    assert editor.value() == {"command": command} and not editor.is_edited()


def test_enter_and_paste_inside_a_piece_are_real_line_breaks(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = JsonEditor()
    qtbot.addWidget(editor)
    editor.set_value({"command": "w" * 200_000})
    editor.show()
    qtbot.waitUntil(lambda: not editor.is_loading())
    cursor = editor.editor.textCursor()
    cursor.setPosition(50_000)  # inside a continued piece of the one long line
    editor.editor.setTextCursor(cursor)
    qtbot.keyClick(editor.editor, Qt.Key.Key_Return)
    assert editor.value() is None  # a raw line break inside a JSON string
    assert "line 2" in editor.error_text()
    editor.editor.undo()
    assert editor.value() == {"command": "w" * 200_000}
    data = QMimeData()
    data.setText("x\ny")
    editor.editor.insertFromMimeData(data)
    assert not editor.is_valid()
    assert "x\ny" in editor.text()


def test_a_huge_input_gets_no_session_rule_and_says_why(open_dialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    command = "echo " + "x" * (ANALYSIS_LIMIT + 1)
    suggestion = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(echo:*)"),),
                                      behavior=RuleBehavior.ALLOW, destination="session")
    dialog, decisions = open_dialog(ApprovalDialog(bash(command, suggestions=(suggestion,))))
    assert not dialog.grants.rule_edits  # not even the CLI's suggestion
    assert "too large to analyse" in dialog.grants.hint.text()
    assert dialog.grants.hint.isVisible()
    assert not dialog.ui.allowSessionButton.isEnabled()
    assert dialog.ui.allowOnceButton.isEnabled()
    lens = dialog.risk_lens
    assert lens is not None
    qtbot.waitUntil(lambda: lens.too_large)  # shown a loop turn after the dialog
    assert not lens.findings
    assert "too large to analyse" in lens.findings_list.item(0).text()
    dialog.allow_once()
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]
    assert decisions[0].final_input == {"command": command}


def test_inputs_under_the_bound_still_get_their_rule(open_dialog) -> None:  # type: ignore[no-untyped-def]
    dialog, _ = open_dialog(ApprovalDialog(bash("echo " + "x" * 1000)), arm=False)
    assert dialog.grants.rule_edits
    assert "too large" not in dialog.grants.hint.text()
    assert dialog.risk_lens is not None and not dialog.risk_lens.too_large


def test_hidden_characters_anywhere_in_four_mebibytes_are_flagged(open_dialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    command = "echo ok " + "a" * (4 * MIB - 100) + "\u202e; rm -rf ~ \u00a0"
    dialog, _ = open_dialog(ApprovalDialog(bash(command)), arm=False)
    warning = dialog.ui.hiddenWarning.text()
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in warning and "U+00A0 NO-BREAK SPACE" in warning
    assert dialog.ui.hiddenWarning.isVisibleTo(dialog)
    lens = dialog.risk_lens
    assert lens is not None
    qtbot.waitUntil(lambda: lens.too_large and lens.is_complete())
    shown = lens.shown_text()
    assert shown.endswith("⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩; rm -rf ~ ⟨U+00A0 NO-BREAK SPACE⟩")
    assert lens.large_view.isVisibleTo(lens) and not lens.command_view.isVisibleTo(lens)
    document = lens.large_view.document()
    end = document.characterCount() - 1
    cursor = QTextCursor(document)
    cursor.setPosition(end - 2)  # inside the last marker
    assert cursor.charFormat().background().color() == QColor("#C92A2A")
    assert document.toPlainText().replace("\n", "") == shown


def test_the_linear_diff_is_a_valid_unified_diff() -> None:
    old = "".join(f"line {n}\n" for n in range(100))
    for new in (old.replace("line 50\n", "line 50!\n"), old.replace("line 0\n", ""),
                old + "more\n", old.replace("line 10\n", "x\n").replace("line 90\n", "y\n")):
        diff = unified_linear(old, new, "a", "b")
        patched = _apply(old, diff)
        assert patched == new, diff
    assert unified_linear(old, old, "a", "b") == ""


def _apply(old: str, diff: str) -> str:
    lines = diff.splitlines(keepends=True)
    assert lines[0] == "--- a\n" and lines[1] == "+++ b\n" and lines[2].startswith("@@ -")
    body = lines[3:]
    source = [line[1:] for line in body if line[0] in " -"]
    target = [line[1:] for line in body if line[0] in " +"]
    start = int(lines[2].split()[1][1:].split(",")[0]) - (0 if source else -1)
    text = old.splitlines(keepends=True)
    first = max(start - 1, 0)
    assert text[first:first + len(source)] == source
    return "".join(text[:first] + target + text[first + len(source):])


@pytest.mark.parametrize("size", [200, 70_000])
def test_the_lens_of_a_command_under_and_over_the_bound_keeps_the_text(qtbot, size: int) -> None:  # type: ignore[no-untyped-def]
    view = RiskLensView()
    qtbot.addWidget(view)
    command = "sudo \u00a0x " + "q" * size
    view.show_command(command)
    assert view.shown_text() == command.replace("\u00a0", "⟨U+00A0 NO-BREAK SPACE⟩")
    assert view.too_large == (size > ANALYSIS_LIMIT)
    assert bool(view.findings) == (size <= ANALYSIS_LIMIT)


def test_a_change_inside_a_megabyte_line_is_shown_with_its_context_only() -> None:
    old = "{\n" + "a" * MIB + "X" + "b" * MIB + "\n}\n"
    new = old.replace("X", "Y")
    diff = unified_linear(old, new, "a", "b")
    assert len(diff) < 3000
    removed = [line for line in diff.splitlines() if line.startswith("-") and "X" in line]
    added = [line for line in diff.splitlines() if line.startswith("+") and "Y" in line]
    assert removed == [f"-[… {MIB - 300:,} unchanged characters …]" + "a" * 300 + "X"
                       + "b" * 300 + f"[… {MIB - 300:,} unchanged characters …]"]
    assert added == [removed[0].replace("X", "Y").replace("-", "+", 1)]


@pytest.mark.parametrize("at", [0, 1, 65_535, 65_536, 65_537, 2 * 65_536, 200_000 - 1])
def test_a_change_anywhere_in_a_long_line_is_found_exactly(at: int) -> None:
    # (the common prefix and suffix are found slice by slice: edges of a slice included)
    line = "".join(chr(ord("a") + n % 7) for n in range(200_000))
    old = "{\n" + line + "\n}\n"
    new = "{\n" + line[:at] + "#" + line[at + 1:] + "\n}\n"
    [removed] = [x for x in unified_linear(old, new, "a", "b").splitlines() if x[:1] == "-"
                 and not x.startswith("---")]
    [added] = [x for x in unified_linear(old, new, "a", "b").splitlines() if x[:1] == "+"
               and not x.startswith("+++")]
    assert len(removed) < 1000 and len(added) < 1000
    keep_before, keep_after = min(at, 300), min(len(line) - at - 1, 300)
    core = line[at - keep_before:at + 1 + keep_after]
    assert core in removed and core[:keep_before] + "#" + core[keep_before + 1:] in added


def test_typed_keys_edit_a_huge_input_and_ctrl_return_allows_exactly_it(open_dialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    command = "echo " + "k" * (300 * 1024) + "\u00a0end"
    dialog, decisions = open_dialog(ApprovalDialog(bash(command)))
    qtbot.waitUntil(lambda: not dialog.json_editor.is_loading())
    press(dialog, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)  # focus the editor
    editor = dialog.json_editor.editor
    cursor = QTextCursor(editor.document().find("end"))
    cursor.clearSelection()
    editor.setTextCursor(cursor)
    for key in (Qt.Key.Key_X, Qt.Key.Key_Backspace, Qt.Key.Key_Y):
        press(dialog, key)
    press(dialog, Qt.Key.Key_Return)  # inside the string: a raw line break, invalid JSON
    press(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert not decisions and not dialog.json_editor.is_valid()
    press(dialog, Qt.Key.Key_Backspace)
    press(dialog, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]
    assert decisions[0].final_input == {"command": command.replace("\u00a0end", "\u00a0endy")}


def test_a_large_file_write_keeps_its_path_rule(open_dialog, tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "big.txt"
    request = ApprovalRequest(session_id="s", session_name="demo", backend=Backend.CLAUDE,
                              tool_name="Write", cwd=str(tmp_path),
                              tool_input={"file_path": str(target), "content": "x" * MIB})
    dialog, _ = open_dialog(ApprovalDialog(request), arm=False)
    assert [str(rule) for _i, rule, _e in dialog.grants.rule_edits] == [f"Edit(/{target})"]
    assert "too large" not in dialog.grants.hint.text()


def test_a_huge_suggested_rule_is_not_offered(open_dialog) -> None:  # type: ignore[no-untyped-def]
    huge = RuleValue(tool_name="WebFetch", rule_content="domain:" + "h" * (ANALYSIS_LIMIT + 1))
    suggestion = PermissionSuggestion(type="addRules", rules=(huge,),
                                      behavior=RuleBehavior.ALLOW, destination="session")
    request = ApprovalRequest(session_id="s", session_name="demo", backend=Backend.CLAUDE,
                              tool_name="WebFetch", tool_input={"url": "https://x.test/"},
                              suggestions=(suggestion,), cwd="/tmp")
    dialog, _ = open_dialog(ApprovalDialog(request), arm=False)
    assert not dialog.grants.rule_edits and "too large" in dialog.grants.hint.text()
