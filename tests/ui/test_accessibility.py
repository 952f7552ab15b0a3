"""Every control a person can reach has a name and a description, as a screen reader
reads them through Qt's accessibility interface, and no two in one view share a name.

Walks each window and dialog (every tab of it) with `accessibility_walk`: the main
window with sessions, waiting requests and several rules (one Revoke button each), the
decision dialogs, the new-session form, Settings, Connect, About and the shortcuts.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable
from pathlib import Path

import pytest
from accessibility_walk import controls, problems
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QLineEdit, QPushButton, QVBoxLayout, QWidget
from test_dialog_fit import DIALOGS

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.diagnostics.about import about_info
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
)
from qoder_desktop.ui.windows.help_dialogs import AboutDialog, ShortcutsDialog
from qoder_desktop.ui.windows.history_window import HistoryWindow
from qoder_desktop.ui.windows.main_window import MainWindow


def _show(qtbot, widget: QWidget) -> QWidget:  # type: ignore[no-untyped-def]
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _main_window() -> MainWindow:
    window = MainWindow(scenarios=["write_edit"])
    info = SessionInfo(name="api", backend=Backend.CLAUDE, cwd="/work/api",
                       state=SessionState.RUNNING)
    window.set_sessions([info])
    window.set_pending([ApprovalRequest(session_id=info.session_id, session_name="api",
                                        backend=Backend.CLAUDE, tool_name="Bash",
                                        tool_input={"command": "ls"})])
    window.set_rules(info.session_id, [
        SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                    rule=RuleValue.parse(text))
        for text in ("Bash(npm test:*)", "Bash(npm run lint)", "Edit")])
    return window


VIEWS: dict[str, Callable[[], QWidget]] = {
    "main window": _main_window,
    **DIALOGS,
    "about": lambda: AboutDialog(about_info(AppPaths.under(Path("/tmp/qoder-a11y")))),
    "keyboard shortcuts": ShortcutsDialog,
    "decision history": lambda: HistoryWindow(QStandardItemModel(0, 8)),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_reachable_control_is_named_described_and_told_apart(qtbot, name: str) -> None:  # type: ignore[no-untyped-def]
    view = _show(qtbot, VIEWS[name]())
    assert len(controls(view)) >= 2  # the walk found the controls
    assert problems(view) == []


def test_each_revoke_button_names_its_rule(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = _show(qtbot, _main_window())
    revokes = [c for c in controls(window) if c.name.startswith("Revoke")]
    assert sorted(c.name for c in revokes) == [
        "Revoke Bash(npm run lint)", "Revoke Bash(npm test:*)", "Revoke Edit"]


def test_the_walk_catches_unnamed_and_duplicate_controls(qtbot) -> None:  # type: ignore[no-untyped-def]
    form = QWidget()
    layout = QVBoxLayout(form)
    for _ in range(2):
        button = QPushButton("Revoke")
        button.setAccessibleDescription("Stop a rule")
        layout.addWidget(button)
    layout.addWidget(QLineEdit())
    _show(qtbot, form)
    found = problems(form)
    assert "2 controls named 'Revoke'" in found
    assert any(p.startswith("no name: QLineEdit") for p in found)
