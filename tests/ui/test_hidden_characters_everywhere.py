"""Hidden characters an agent sends show the same in the approval dialog and in the
desktop notification: the same markers (`text.visible.make_visible`), and the request's
texts checked by one list (`text.visible.REQUEST_TEXT_FIELDS`)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable

import pytest
from PySide6.QtWidgets import QLabel

from qoder_desktop.domain.models import ApprovalRequest
from qoder_desktop.text.visible import REQUEST_TEXT_FIELDS, make_visible
from qoder_desktop.ui.dialogs.approval import ApprovalDialog
from qoder_desktop.ui.notifications import actions_for, note_for
from qoder_desktop.ui.plain_text import set_plain

RLO, ZWSP, ZWJ = "\u202e", "\u200b", "\u200d"
RLO_MARK = "⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩"
ZWSP_MARK = "⟨U+200B ZERO WIDTH SPACE⟩"


def _hidden_to_the_eye(text: str) -> bool:
    return any(char in text for char in (RLO, ZWSP, ZWJ))


def test_an_agents_hidden_characters_show_the_same_in_the_dialog_and_the_notification(
        open_dialog: Callable, make_request: Callable) -> None:  # type: ignore[type-arg]
    session = f"op{RLO}s"  # (short: the title elides a long session name)
    command = f"rm{ZWSP} -rf build"
    request = make_request("Bash", {"command": command}, session_name=session,
                           title=f"Run{ZWJ} cleanup?", cwd="/tmp")
    dialog, _ = open_dialog(ApprovalDialog(request), arm=False)
    note = note_for(request)

    shown_session, shown_command = make_visible(session), make_visible(command)
    assert RLO_MARK in shown_session and ZWSP_MARK in shown_command
    # the notification: session in the title, the command in the body, both as markers
    assert shown_session in note.title and shown_command in note.body
    # the dialog: the same markers in its header and in the command it shows
    assert shown_session in dialog.ui.whoLabel.text()
    assert shown_session in dialog.windowTitle()
    assert shown_command in dialog.risk_lens.shown_text()
    for label in dialog.findChildren(QLabel):
        assert not _hidden_to_the_eye(label.text()), label.objectName()
    assert not _hidden_to_the_eye(note.title + note.body)
    # and neither lets it through unseen: the dialog names each one, the notification
    # offers no "Allow once"
    warning = dialog.ui.hiddenWarning.text()
    for name in ("U+202E RIGHT-TO-LEFT OVERRIDE", "U+200B ZERO WIDTH SPACE",
                 "U+200D ZERO WIDTH JOINER"):
        assert name in warning
    assert "allow" not in [action.key for action in actions_for(request)]


@pytest.mark.parametrize("field", REQUEST_TEXT_FIELDS)
def test_a_hidden_character_in_any_request_text_is_named_by_both(
        field: str, open_dialog: Callable, make_request: Callable) -> None:  # type: ignore[type-arg]
    plain: ApprovalRequest = make_request("Bash", {"command": "ls -la"}, cwd="/tmp")
    assert "allow" in [action.key for action in actions_for(plain)]
    value = "/tmp/a\u200bb" if field == "blocked_path" else f"a{ZWSP}b"
    request = plain.model_copy(update={field: value})
    dialog, _ = open_dialog(ApprovalDialog(request), arm=False)
    assert "U+200B ZERO WIDTH SPACE" in dialog.ui.hiddenWarning.text()
    assert "allow" not in [action.key for action in actions_for(request)]


def test_set_plain_shows_markers_and_never_rich_text(qtbot) -> None:  # type: ignore[no-untyped-def]
    label = QLabel()
    qtbot.addWidget(label)
    set_plain(label, f"<b>x</b>{RLO}txt")
    assert label.text() == f"<b>x</b>{RLO_MARK}txt"
    set_plain(label, None)
    assert label.text() == ""
