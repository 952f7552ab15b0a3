"""The new-session form and the risky-options confirmation (offscreen): the options
it emits carry the consent the real confirmation box minted."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox, QWidget

from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.models import PermissionMode
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.ui.widgets.pickers import split_list
from qoder_desktop.ui.windows import confirm
from qoder_desktop.ui.windows.new_session_form import NewSessionDialog


@pytest.fixture
def parent(qtbot) -> QWidget:  # type: ignore[no-untyped-def]
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def answer_box(qtbot, owner: QWidget, name: str, confirm_it: bool) -> None:  # type: ignore[no-untyped-def]
    """Wait for the real confirmation box `name` on `owner`, then confirm or cancel it."""
    def open_box() -> QMessageBox | None:
        box = owner.findChild(QMessageBox, name)
        return box if box is not None and box.isVisible() else None

    qtbot.waitUntil(lambda: open_box() is not None)
    box = open_box()
    assert box is not None
    if confirm_it:
        accept = next(b for b in box.buttons()
                      if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
        qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(box, Qt.Key.Key_Escape)


def open_form(qtbot, parent: QWidget, cwd: Path, **kw: object) -> NewSessionDialog:  # type: ignore[no-untyped-def]
    dialog = NewSessionDialog(parent, defaults=SessionOptions(cwd=str(cwd)), **kw)  # type: ignore[arg-type]
    dialog.open()
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def start(dialog: NewSessionDialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    ok = dialog.ui.buttonBox.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)


def choose_mode(dialog: NewSessionDialog, qtbot, *keys: Qt.Key) -> None:  # type: ignore[no-untyped-def]
    dialog.ui.modeCombo.setFocus()
    for key in keys:
        qtbot.keyClick(dialog.ui.modeCombo, key)


def test_real_confirmation_box_names_the_risk_and_does_not_block(parent: QWidget,
                                                                 qtbot) -> None:  # type: ignore[no-untyped-def]
    answers: list[ModeConsent | None] = []
    box = confirm.confirm_dangerous_mode(parent, PermissionMode.BYPASS, answers.append,
                                         session_id="s1")
    qtbot.waitUntil(box.isVisible)
    assert answers == []
    assert "including deleting files and running commands" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: answers == [None])
    box = confirm.confirm_dangerous_mode(parent, PermissionMode.BYPASS, answers.append,
                                         session_id="s1")
    qtbot.waitUntil(box.isVisible)
    accept = next(b for b in box.buttons()
                  if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
    qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(answers) == 2)
    consent = answers[1]
    assert isinstance(consent, ModeConsent)  # minted by the box, for what it asked
    assert (consent.session_id, consent.mode) == ("s1", PermissionMode.BYPASS)


def test_scenario_is_hidden_outside_demo_and_fields_are_checked(
        parent: QWidget, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = open_form(qtbot, parent, tmp_path / "missing")
    assert not dialog.ui.scenarioCombo.isVisible()
    with qtbot.assertNotEmitted(dialog.submitted):
        start(dialog, qtbot)
    assert "does not exist" in dialog.ui.errorLabel.text()
    dialog.ui.cwdEdit.setText(str(tmp_path))
    qtbot.keyClicks(dialog.ui.mcpEdit, "[1, 2")
    with qtbot.assertNotEmitted(dialog.submitted):
        start(dialog, qtbot)
    assert "MCP servers" in dialog.ui.errorLabel.text()
    assert dialog.isVisible()
    dialog.ui.mcpEdit.clear()
    with qtbot.waitSignal(dialog.submitted) as blocker:
        start(dialog, qtbot)
    assert blocker.args[0].scenario is None
    assert blocker.args[0].tools is None


def test_bypass_mode_is_not_emitted_without_confirmation(
        parent: QWidget, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = open_form(qtbot, parent, tmp_path)
    choose_mode(dialog, qtbot, Qt.Key.Key_End, Qt.Key.Key_Up)
    assert dialog.chosen_mode() is PermissionMode.BYPASS
    with qtbot.assertNotEmitted(dialog.submitted):
        start(dialog, qtbot)
        answer_box(qtbot, dialog, "confirmDangerousMode", confirm_it=False)
        qtbot.waitUntil(lambda: "not started" in dialog.ui.errorLabel.text())
    assert dialog.isVisible()
    assert "not started" in dialog.ui.errorLabel.text()


def test_bypass_mode_is_emitted_after_confirmation(
        parent: QWidget, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = open_form(qtbot, parent, tmp_path)
    choose_mode(dialog, qtbot, Qt.Key.Key_End)
    with qtbot.waitSignal(dialog.submitted) as blocker:
        start(dialog, qtbot)
        answer_box(qtbot, dialog, "confirmDangerousMode", confirm_it=True)
    options = blocker.args[0]
    assert options.permission_mode is PermissionMode.YOLO
    consent = options.consent  # the box's, for a new session with exactly these risks
    assert isinstance(consent, ModeConsent)
    assert (consent.session_id, consent.mode, list(consent.risks)) == (
        None, PermissionMode.YOLO, options.risks())
    qtbot.waitUntil(lambda: not dialog.isVisible())


def test_safe_modes_need_no_confirmation(parent: QWidget, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[PermissionMode] = []
    monkeypatch.setattr(confirm, "confirm_dangerous_mode",
                        lambda _parent, mode, *_args, **_kw: asked.append(mode))
    dialog = open_form(qtbot, parent, tmp_path)
    choose_mode(dialog, qtbot, Qt.Key.Key_Down, Qt.Key.Key_Down)
    with qtbot.waitSignal(dialog.submitted) as blocker:
        start(dialog, qtbot)
    assert blocker.args[0].permission_mode is PermissionMode.PLAN
    assert blocker.args[0].consent is None
    assert asked == []


def test_a_whole_tool_bash_rule_asks_for_the_same_confirmation(
        parent: QWidget, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []

    def fake(parent: QWidget, risks: list[str], mode: PermissionMode,
             on_done: Callable[[ModeConsent | None], None]) -> None:
        asked.append(risks)
        on_done(None)

    monkeypatch.setattr(confirm, "confirm_risky_options", fake)
    dialog = open_form(qtbot, parent, tmp_path)
    qtbot.keyClicks(dialog.ui.allowedEdit, "Read, Bash")
    with qtbot.assertNotEmitted(dialog.submitted):
        start(dialog, qtbot)
    assert asked == [["allowed tool Bash: every Bash call runs without asking"]]
    assert "not started" in dialog.ui.errorLabel.text()


def test_the_real_options_box_lists_each_risk(parent: QWidget, qtbot) -> None:  # type: ignore[no-untyped-def]
    answers: list[ModeConsent | None] = []
    box = confirm.confirm_risky_options(parent, ["allowed tool Bash: every Bash call runs "
                                                 "without asking"], PermissionMode.DEFAULT,
                                        answers.append)
    assert "• allowed tool Bash" in box.text()
    assert box.defaultButton() is box.escapeButton()
    box.reject()
    assert answers == [None]


def test_rule_lists_split_on_commas_outside_parentheses() -> None:
    assert split_list('Read, Bash(git commit -m "a, b"),\n WebFetch,,') == [
        "Read", 'Bash(git commit -m "a, b")', "WebFetch"]
    assert split_list("  ") == []
