"""A decision dialog's Ctrl chords work whatever field has focus (`ChordKeeper`).

On X11 a line edit claims Ctrl+E, Ctrl+K … as editing keys; offscreen it claims Ctrl+A
(select all) the same way, so that chord stands in for them here: a dialog that owns it
gets it from a focused field, plain letters still go into the field, and once the
dialog is done the field has its own chord back. Real widgets, offscreen.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QDialog, QLineEdit, QVBoxLayout
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.dialogs.chords import ChordKeeper

CTRL = Qt.KeyboardModifier.ControlModifier


class Dialog(QDialog):
    """A dialog with one text field and its own Ctrl+A, kept by a `ChordKeeper`."""

    def __init__(self) -> None:
        super().__init__()
        self.field = QLineEdit(self)
        QVBoxLayout(self).addWidget(self.field)
        self.done_ = False
        self.fired: list[str] = []
        self.keeper = ChordKeeper(self, lambda: self.done_)
        key = QKeySequence("Ctrl+A")
        QShortcut(key, self).activated.connect(lambda: self.fired.append("Ctrl+A"))
        self.keeper.add(key)


@pytest.fixture
def dialog(qtbot: QtBot) -> Iterator[Dialog]:
    """The dialog on screen, its field focused, the keeper following the focus."""
    shown = Dialog()
    qtbot.addWidget(shown)
    shown.show()
    shown.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is shown)
    shown.keeper.follow_focus()
    shown.field.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is shown.field)
    yield shown
    shown.keeper.stop()


def test_the_dialogs_chord_reaches_it_from_a_focused_field(dialog: Dialog,
                                                           qtbot: QtBot) -> None:
    qtbot.keyClicks(dialog.field, "make a")
    qtbot.keyClick(dialog.field, Qt.Key.Key_A, CTRL)
    assert dialog.fired == ["Ctrl+A"]  # the dialog's, not the field's select-all
    assert dialog.field.text() == "make a" and not dialog.field.hasSelectedText()


def test_once_the_dialog_is_done_the_field_has_its_chord_back(dialog: Dialog,
                                                              qtbot: QtBot) -> None:
    qtbot.keyClicks(dialog.field, "make")
    dialog.done_ = True
    dialog.keeper.stop()
    qtbot.keyClick(dialog.field, Qt.Key.Key_A, CTRL)
    assert dialog.fired == []
    assert dialog.field.selectedText() == "make"  # the field's own select-all


def test_a_field_focused_later_is_watched_and_the_one_left_is_not(
        dialog: Dialog, qtbot: QtBot) -> None:
    other = QLineEdit(dialog)
    dialog.layout().addWidget(other)
    other.show()
    other.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is other)
    qtbot.keyClick(other, Qt.Key.Key_A, CTRL)
    assert dialog.fired == ["Ctrl+A"]
