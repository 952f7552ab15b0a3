"""The new-session form and the bypass confirmation (offscreen)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox, QWidget

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


def answering(monkeypatch: pytest.MonkeyPatch, answer: bool) -> list[PermissionMode]:
    """Replace the confirmation box with one that answers `answer` at once."""
    asked: list[PermissionMode] = []

    def fake(parent: QWidget, mode: PermissionMode, on_done: Callable[[bool], None]) -> None:
        asked.append(mode)
        on_done(answer)

    monkeypatch.setattr(confirm, "confirm_dangerous_mode", fake)
    return asked


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
    answers: list[bool] = []
    box = confirm.confirm_dangerous_mode(parent, PermissionMode.BYPASS, answers.append)
    qtbot.waitUntil(box.isVisible)
    assert answers == []
    assert "including deleting files and running commands" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: answers == [False])
    box = confirm.confirm_dangerous_mode(parent, PermissionMode.BYPASS, answers.append)
    qtbot.waitUntil(box.isVisible)
    accept = next(b for b in box.buttons()
                  if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
    qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: answers == [False, True])


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
        parent: QWidget, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked = answering(monkeypatch, False)
    dialog = open_form(qtbot, parent, tmp_path)
    choose_mode(dialog, qtbot, Qt.Key.Key_End, Qt.Key.Key_Up)
    assert dialog.chosen_mode() is PermissionMode.BYPASS
    with qtbot.assertNotEmitted(dialog.submitted):
        start(dialog, qtbot)
    assert asked == [PermissionMode.BYPASS]
    assert dialog.isVisible()
    assert "not started" in dialog.ui.errorLabel.text()


def test_bypass_mode_is_emitted_after_confirmation(
        parent: QWidget, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked = answering(monkeypatch, True)
    dialog = open_form(qtbot, parent, tmp_path)
    choose_mode(dialog, qtbot, Qt.Key.Key_End)
    with qtbot.waitSignal(dialog.submitted) as blocker:
        start(dialog, qtbot)
    assert blocker.args[0].permission_mode is PermissionMode.YOLO
    assert blocker.args[0].bypass_confirmed
    assert asked == [PermissionMode.YOLO]
    qtbot.waitUntil(lambda: not dialog.isVisible())


def test_safe_modes_need_no_confirmation(parent: QWidget, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    asked = answering(monkeypatch, False)
    dialog = open_form(qtbot, parent, tmp_path)
    choose_mode(dialog, qtbot, Qt.Key.Key_Down, Qt.Key.Key_Down)
    with qtbot.waitSignal(dialog.submitted) as blocker:
        start(dialog, qtbot)
    assert blocker.args[0].permission_mode is PermissionMode.PLAN
    assert not blocker.args[0].bypass_confirmed
    assert asked == []


def test_a_whole_tool_bash_rule_asks_for_the_same_confirmation(
        parent: QWidget, qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []

    def fake(parent: QWidget, risks: list[str], on_done: Callable[[bool], None]) -> None:
        asked.append(risks)
        on_done(False)

    monkeypatch.setattr(confirm, "confirm_risky_options", fake)
    dialog = open_form(qtbot, parent, tmp_path)
    qtbot.keyClicks(dialog.ui.allowedEdit, "Read, Bash")
    with qtbot.assertNotEmitted(dialog.submitted):
        start(dialog, qtbot)
    assert asked == [["allowed tool Bash: every Bash call runs without asking"]]
    assert "not started" in dialog.ui.errorLabel.text()


def test_the_real_options_box_lists_each_risk(parent: QWidget, qtbot) -> None:  # type: ignore[no-untyped-def]
    answers: list[bool] = []
    box = confirm.confirm_risky_options(parent, ["allowed tool Bash: every Bash call runs "
                                                 "without asking"], answers.append)
    assert "• allowed tool Bash" in box.text()
    assert box.defaultButton() is box.escapeButton()
    box.reject()
    assert answers == [False]


def test_rule_lists_split_on_commas_outside_parentheses() -> None:
    assert split_list('Read, Bash(git commit -m "a, b"),\n WebFetch,,') == [
        "Read", 'Bash(git commit -m "a, b")', "WebFetch"]
    assert split_list("  ") == []
