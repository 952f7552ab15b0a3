"""Malformed suggestions from an agent's CLI are shown as not offered, with the reason,
never as a check box that would do nothing."""

from __future__ import annotations

from helpers.keys import press
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox

from qoder_desktop.domain.models import PermissionSuggestion
from qoder_desktop.ui.dialogs import ApprovalDialog

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier

# As a terminal hook passes them on from the Qoder CLI (read with `from_wire` only).
WIRE = [
    {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm run test"}],
     "behavior": "allow", "destination": "localSettings"},
    {"type": "addDirectories", "directories": [], "destination": "session"},
    {"type": "removeDirectories", "directories": [" "], "destination": "session"},
    {"type": "replaceRules", "rules": [{"toolName": "Read"}], "destination": "session"},
    {"type": "addRules", "rules": [{"toolName": " "}], "behavior": "allow",
     "destination": "session"},
    {"type": "addDirectories", "directories": ["/opt/data"], "destination": "session"},
]


def test_malformed_suggestions_are_listed_as_not_offered_with_their_reason(
        open_dialog, make_request, qtbot) -> None:  # type: ignore[no-untyped-def]
    request = make_request("Bash", {"command": "npm run test"}, cwd="/work/proj",
                           suggestions=tuple(PermissionSuggestion.from_wire(w) for w in WIRE))
    dialog, decisions = open_dialog(ApprovalDialog(request))
    grants = dialog.grants
    boxes = [box.text() for box in dialog.findChildren(QCheckBox) if box.isVisible()]
    assert [update.directories for update, _box in grants.kept_aside] == [("/opt/data",)]
    assert not any("access to  (session)" in text or "access to (session)" in text
                   or "Read" in text for text in boxes)
    note = grants.malformed_note
    assert note.isVisible() and note.text().startswith("Not offered")
    assert note.text().count("a directory update without directories") == 2
    assert "a rule update without a behavior" in note.text()
    assert "a rule update without a usable rule" in note.text()
    [(_update, box)] = grants.kept_aside
    box.setChecked(True)
    press(dialog, Qt.Key.Key_Return, CTRL_SHIFT)
    assert [(u.type, u.directories) for u in decisions[0].updates] == [
        ("addRules", None), ("addDirectories", ("/opt/data",))]
