"""An open approval dialog whose request a new grant covers: the mark shows in place, the
keys wait out the arming delay again, and only the person's Ctrl+Return allows it.

Key handling: these run offscreen and on xcb (`test_keys_on_xcb.KEY_MODULES`).
"""

from __future__ import annotations

from helpers.keys import press
from PySide6.QtCore import Qt

from qoder_desktop.domain.models import DecidedBy, DecisionKind
from qoder_desktop.ui.dialogs import ApprovalDialog

CTRL = Qt.KeyboardModifier.ControlModifier


def _marked(request):  # type: ignore[no-untyped-def]
    return request.model_copy(update={"covered_by_rule": "Bash(touch a *)",
                                      "granted_while_waiting": True})


def test_a_marked_request_shows_its_rule_and_ctrl_return_allows_it_once_after_arming(
        open_dialog, qtbot, make_request):  # type: ignore[no-untyped-def]
    request = make_request("Bash", {"command": "touch a b"}, cwd="/work/proj")
    dialog, decisions = open_dialog(ApprovalDialog(request))
    assert dialog.ui.reasonLabel.text() == ""
    assert dialog.update_request(_marked(request))
    note = dialog.ui.reasonLabel.text()
    assert note.startswith("Covered by your new rule Bash(touch a *), but the agent asked "
                           "before it held that rule")
    assert dialog.ui.reasonLabel.isVisibleTo(dialog)
    assert not dialog.is_armed()  # what the keys answer changed: they wait again
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions == []
    qtbot.waitUntil(dialog.is_armed, timeout=2000)
    press(dialog, Qt.Key.Key_Return, CTRL)
    [decision] = decisions
    assert (decision.kind, decision.decided_by) == (DecisionKind.ALLOW_ONCE, DecidedBy.USER)
    assert decision.final_input == {"command": "touch a b"}


def test_a_finished_dialog_or_another_request_is_not_updated(
        open_dialog, make_request):  # type: ignore[no-untyped-def]
    request = make_request("Bash", {"command": "touch a b"}, cwd="/work/proj")
    other = make_request("Bash", {"command": "touch a c"}, cwd="/work/proj")
    dialog, _ = open_dialog(ApprovalDialog(request))
    assert not dialog.update_request(_marked(other))
    assert dialog.request is request
    dialog.deny()
    assert not dialog.update_request(_marked(request))
    assert dialog.request is request
