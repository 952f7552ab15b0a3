"""The new-session form by keyboard (offscreen, and on xcb under Xvfb through
test_keys_on_xcb.py): typing goes into the prompt at once, Ctrl+Return starts the
session, Alt+S is "Start session" and every mnemonic of a tab is its own."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QWidget

from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.ui.windows.new_session_form import NewSessionDialog

_PARENTS: list[QWidget] = []


def _open(qtbot, tmp_path: Path) -> NewSessionDialog:  # type: ignore[no-untyped-def]
    parent = QWidget()
    _PARENTS[:] = [parent]  # kept alive until the next test's
    qtbot.addWidget(parent)
    parent.show()
    qtbot.waitExposed(parent)
    dialog = NewSessionDialog(parent, defaults=SessionOptions(cwd=str(tmp_path)),
                              scenarios=["write_edit", "questions"])
    dialog.open()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog)
    return dialog


def test_typing_at_once_goes_into_the_prompt_and_ctrl_return_starts(
        qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = _open(qtbot, tmp_path)
    assert QApplication.focusWidget() is dialog.ui.promptEdit
    qtbot.keyClicks(QApplication.focusWidget(), "list the files")
    assert dialog.ui.promptEdit.toPlainText() == "list the files"
    with qtbot.waitSignal(dialog.submitted, timeout=3000) as got:
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return,
                       Qt.KeyboardModifier.ControlModifier)
    options = got.args[0]
    assert options.prompt == "list the files" and options.cwd == str(tmp_path)
    assert options.scenario == "write_edit"
    qtbot.waitUntil(lambda: not dialog.isVisible())


def test_alt_s_starts_the_session(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = _open(qtbot, tmp_path)
    with qtbot.waitSignal(dialog.submitted, timeout=3000):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_S,
                       Qt.KeyboardModifier.AltModifier)


def _mnemonic(text: str) -> str | None:
    found = re.search(r"&([^&])", text.replace("&&", ""))
    return found.group(1).lower() if found else None


def test_each_mnemonic_on_a_tab_is_its_own(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = _open(qtbot, tmp_path)
    shared = [_mnemonic(dialog.ui.tabs.tabText(i)) for i in range(dialog.ui.tabs.count())]
    shared += [_mnemonic(b.text()) for b in dialog.ui.buttonBox.buttons()]
    for index in range(dialog.ui.tabs.count()):
        page = dialog.ui.tabs.widget(index)
        keys = list(shared)
        for widget in page.findChildren(QWidget):
            if isinstance(widget, (QLabel, QAbstractButton)) and not widget.isHidden():
                keys.append(_mnemonic(widget.text()))
        keys = [k for k in keys if k]
        assert len(keys) == len(set(keys)), (dialog.ui.tabs.tabText(index), sorted(keys))
