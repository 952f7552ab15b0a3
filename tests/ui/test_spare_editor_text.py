"""A spare approval dialog whose first frame shows the command or the changes writes its
JSON editor's text after that frame: the input's value counts from the moment the
request is filled in, and the text is there before anyone can see the editor.

Run offscreen and, through `test_keys_on_xcb.py`, on xcb under Xvfb.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.keys import press
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import DecisionKind
from qoder_desktop.preview.diffs import pretty_json
from qoder_desktop.ui.dialogs import ApprovalDialog
from qoder_desktop.ui.dialogs.spares import DialogSpares
from qoder_desktop.ui.widgets.json_editor import JsonEditor

CTRL = Qt.KeyboardModifier.ControlModifier
INPUT = {"command": "make build", "description": "Build it"}


def _editor_json(dialog: ApprovalDialog) -> object:
    text = dialog.json_editor.editor.toPlainText()
    return json.loads(text) if text else None


@pytest.mark.arming
def test_a_spare_bash_dialog_holds_its_input_as_json_once_on_screen(
        qtbot: QtBot, spares: DialogSpares, make_request: Any, open_dialog: Any) -> None:
    request = make_request("Bash", dict(INPUT), cwd="/work/p")
    dialog, decisions = open_dialog(spares.take(request, None), arm=False)
    assert isinstance(dialog, ApprovalDialog)
    assert dialog.ui.detailTabs.currentWidget() is dialog.ui.inspectTab
    qtbot.waitUntil(lambda: _editor_json(dialog) == INPUT, timeout=3000)
    assert not dialog.json_editor.editor.isReadOnly()
    qtbot.waitUntil(dialog.is_armed, timeout=3000)
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]
    assert decisions[0].final_input == INPUT


def test_the_input_tab_opened_at_once_shows_the_json(
        qtbot: QtBot, spares: DialogSpares, make_request: Any) -> None:
    """Ctrl+E (it works before arming) right after showing, before the first frame's
    loop turn: the editor holds the text the moment it is seen, and takes edits."""
    request = make_request("Edit", {"file_path": "/work/p/a.py", "old_string": "x",
                                    "new_string": "y"}, cwd="/work/p")
    dialog = spares.take(request, None)
    assert isinstance(dialog, ApprovalDialog)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.focus_json_editor()
    assert dialog.json_editor.editor.isVisible()
    assert _editor_json(dialog) == request.tool_input
    assert not dialog.json_editor.editor.isReadOnly()


@pytest.mark.parametrize("tool", ["Read", "WebFetch"])
def test_a_spare_whose_first_frame_is_the_json_has_its_text_at_once(
        spares: DialogSpares, make_request: Any, tool: str, tmp_path: Path) -> None:
    request = make_request(tool, {"file_path": str(tmp_path / "a"), "url": "https://x.test"})
    dialog = spares.take(request, None)
    assert isinstance(dialog, ApprovalDialog)
    assert dialog.ui.detailTabs.currentWidget() is dialog.ui.inputTab
    assert _editor_json(dialog) == request.tool_input


def test_a_held_value_counts_at_once_and_writing_its_text_changes_nothing_else(
        qtbot: QtBot) -> None:
    editor = JsonEditor()
    qtbot.addWidget(editor)
    editor.set_value(dict(INPUT), text_later=True)
    assert editor.value() == INPUT and editor.is_valid() and not editor.is_edited()
    assert editor.text() == pretty_json(INPUT)
    assert editor.editor.isReadOnly()  # (nothing is typed into a text not written yet)
    seen: list[object] = []
    for signal in (editor.value_changed, editor.validity_changed, editor.edited_changed):
        signal.connect(seen.append)
    editor.write_text()
    assert editor.editor.toPlainText() == pretty_json(INPUT)
    assert seen == []  # (the value, its validity and its edit state stay as they were)
    assert editor.value() == INPUT and not editor.editor.isReadOnly()
    editor.editor.setPlainText('{"command": "make test"}')
    assert editor.value() == {"command": "make test"} and editor.is_edited()
