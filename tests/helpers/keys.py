"""Key presses as a person makes them, for the dialog tests."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget


def press(widget: QWidget, key: Qt.Key,
          modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """A key press and release on the focused widget when `widget` is its dialog.

    Shortcuts then go through Qt's shortcut map from there, as with a real keyboard.
    """
    focused = QApplication.focusWidget()
    if focused is not None and widget.isAncestorOf(focused):
        widget = focused
    QTest.keyClick(widget, key, modifiers)
