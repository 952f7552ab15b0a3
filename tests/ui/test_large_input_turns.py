"""Large inputs are prepared over several loop turns, and what the person must see is
there when the dialog arms; a later edit or command replaces work still pending
(a 4 MiB input blocks the loop at most 100 ms)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from helpers.loop import wait_qt_turns
from PySide6.QtGui import QTextCursor

from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.preview.diffs import pretty_json
from qoder_desktop.ui.dialogs import ApprovalDialog, arming
from qoder_desktop.ui.dialogs.inspect_views import MAX_LISTED, RiskLensView
from qoder_desktop.ui.widgets.json_editor import JsonEditor

MIB = 1024 * 1024


def bash(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s", session_name="demo", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp")


@pytest.mark.arming
def test_a_long_command_is_analysed_and_listed_before_the_dialog_arms(open_dialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = ApprovalDialog(bash("sudo xyz; " * 1024))  # 10 KB, 2,048 findings
    lens = dialog.risk_lens
    assert lens is not None
    at_arming: list[tuple[bool, int, str]] = []
    dialog.gate.armed_changed.connect(lambda armed: at_arming.append(
        (lens.is_complete(), lens.findings_list.count(), lens.findings_caption.text()))
        if armed else None)
    open_dialog(dialog)
    [(complete, listed, caption)] = at_arming
    assert complete and listed == MAX_LISTED + 1
    assert "more not highlighted" in caption and "analysing" not in caption


@pytest.mark.arming
def test_a_delay_that_ends_before_the_findings_are_shown_waits_for_them(  # type: ignore[no-untyped-def]
        open_dialog, monkeypatch) -> None:
    # (no delay at all: the gate's first look comes between the analysis and its showing)
    monkeypatch.setattr(arming, "ARMING_DELAY_MS", 0)
    dialog = ApprovalDialog(bash("sudo xyz; " * 1024))
    lens = dialog.risk_lens
    assert lens is not None
    looks: list[bool] = []
    check = dialog.content_complete
    dialog.gate.set_ready_check(lambda: looks.append(check()) or looks[-1])
    at_arming: list[tuple[bool, int]] = []
    dialog.gate.armed_changed.connect(lambda armed: at_arming.append(
        (lens.is_complete(), lens.findings_list.count())) if armed else None)
    open_dialog(dialog)
    assert at_arming == [(True, MAX_LISTED + 1)]
    assert looks[0] is False and looks[-1] is True  # it waited, then armed


@pytest.mark.arming
def test_a_huge_command_flags_what_it_hides_and_why_no_rule_when_armed(open_dialog) -> None:  # type: ignore[no-untyped-def]
    dialog = ApprovalDialog(bash("a" * (4 * MIB) + "\u202e"))
    at_arming: list[tuple[str, str]] = []
    dialog.gate.armed_changed.connect(lambda armed: at_arming.append(
        (dialog.ui.hiddenWarning.text(), dialog.grants.hint.text())) if armed else None)
    open_dialog(dialog)
    [(warning, hint)] = at_arming
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in warning
    assert "too large to analyse" in hint


def test_a_loaded_huge_input_is_checked_once(qtbot) -> None:  # type: ignore[no-untyped-def]
    # (the highlighter recolouring the loaded text is no edit: no second check, so the
    # dialog does not inspect 4 MiB twice)
    editor = JsonEditor()
    qtbot.addWidget(editor)
    editor.show()
    values: list[object] = []
    editor.value_changed.connect(values.append)
    command = "rm -rf ~/x\u00a0" + "b" * (4 * MIB)
    editor.set_value({"command": command})
    qtbot.waitUntil(lambda: not editor.is_loading() and len(values) == 2)
    wait_qt_turns(qtbot)  # (the highlighter recolours in turns of its own)
    assert not editor.is_checking()  # no second check is on its way
    assert values == [{"command": command}] * 2  # set, then checked after loading
    assert editor.text() == pretty_json({"command": command})
    assert not editor.is_edited()


def test_the_diff_follows_the_last_edit_of_a_huge_input(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = JsonEditor()
    qtbot.addWidget(editor)
    editor.show()
    command = "c" * MIB
    editor.set_value({"command": command})
    qtbot.waitUntil(lambda: not editor.is_loading())
    cursor = editor.editor.textCursor()
    cursor.setPosition(editor.editor.toPlainText().rindex('"'))
    cursor.insertText("1")
    assert editor.value() == {"command": command + "1"}  # (checked now: a diff starts)
    cursor.insertText("2")
    assert editor.value() == {"command": command + "12"}  # (the first diff is dropped)
    qtbot.waitUntil(lambda: "+" in editor.diff_view.toPlainText()
                    and not editor.is_checking())
    added = [line for line in editor.diff_view.toPlainText().splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert len(added) == 1 and added[0].endswith('cc12"')
    cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor, 2)
    cursor.removeSelectedText()
    assert not editor.is_edited()
    qtbot.waitUntil(lambda: not editor.is_checking())
    assert not editor.diff_view.isVisibleTo(editor)


@pytest.mark.parametrize("first", ["sudo xyz; " * 1024, "echo " + "x" * (4 * MIB)])
def test_a_newer_command_replaces_one_still_being_prepared(qtbot, first: str) -> None:  # type: ignore[no-untyped-def]
    view = RiskLensView()
    qtbot.addWidget(view)
    view.show_command(first)
    view.show_command("sudo ls")
    assert view.is_complete()  # (the first command's steps are cancelled, not running)
    wait_qt_turns(qtbot)  # what was pending for the first command must not come back
    assert view.shown_text() == "sudo ls"
    assert view.command_view.isVisibleTo(view) and not view.large_view.isVisibleTo(view)
    assert view.command_view.toPlainText() == "sudo ls"
    assert [("sudo ls"[f.start:f.end]) for f in view.findings] == ["sudo"]
    assert view.large_view.document().isEmpty()


def test_an_edit_while_a_huge_input_is_being_checked_wins(qtbot) -> None:  # type: ignore[no-untyped-def]
    # (a large text is read back a few blocks per loop turn: a key typed meanwhile,
    # even in a part already read, drops that read; only the text with both keys is
    # ever emitted and shown)
    editor = JsonEditor()
    qtbot.addWidget(editor)
    editor.show()
    command = "d" * (2 * MIB)
    editor.set_value({"command": command})
    qtbot.waitUntil(lambda: not editor.is_loading() and not editor.is_checking())
    values: list[object] = []
    editor.value_changed.connect(values.append)
    cursor = editor.editor.textCursor()
    cursor.setPosition(editor.editor.toPlainText().rindex('"'))
    cursor.insertText("1")
    editor._timer.stop()
    editor._revalidate()  # (what the debounce does: the read begins, the rest follows)
    cursor.setPosition(editor.editor.toPlainText().index('"d') + 1)
    cursor.insertText("2")
    final = {"command": "2" + command + "1"}
    qtbot.waitUntil(lambda: bool(values), timeout=5000)
    qtbot.waitUntil(lambda: 'dd1"' in editor.diff_view.toPlainText()
                    and not editor.is_checking())
    assert values == [final]
    assert editor.value() == final and editor.is_edited()


def test_the_lens_and_the_warning_follow_an_edit_of_a_huge_command(open_dialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    # (the inspection waits for the edit's check instead of reading 1 MiB itself)
    command = "echo " + "x" * MIB
    dialog, _ = open_dialog(ApprovalDialog(bash(command)), arm=False)
    qtbot.waitUntil(lambda: not dialog.json_editor.is_loading())
    lens = dialog.risk_lens
    assert lens is not None
    assert not dialog.ui.hiddenWarning.isVisibleTo(dialog)
    editor = dialog.json_editor.editor
    cursor = editor.textCursor()
    cursor.setPosition(editor.toPlainText().rindex('"'))
    cursor.insertText("\u200b")
    qtbot.waitUntil(lambda: lens.is_complete() and lens.shown_text().endswith(
        "x⟨U+200B ZERO WIDTH SPACE⟩"), timeout=5000)
    assert "U+200B ZERO WIDTH SPACE" in dialog.ui.hiddenWarning.text()
    assert dialog.ui.hiddenWarning.isVisibleTo(dialog)
    assert dialog.json_editor.value() == {"command": command + "\u200b"}
