"""The desk sees the person: a key press in one of the app's windows counts, once the
desk has seen no input for the idle time, and never in a window that sets Away up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.control.person_watch import PersonWatch


class Watched:
    def __init__(self, qtbot: QtBot) -> None:
        self.seen = 0
        self.idle_s = 0.0
        self.setting_up: set[int] = set()
        self.window = QLineEdit()
        self.setup = QLineEdit()
        for widget in (self.window, self.setup):
            qtbot.addWidget(widget)
            widget.show()
        self.watch = PersonWatch(self._seen, lambda: self.idle_s,
                                 lambda window: id(window) in self.setting_up)

    def _seen(self) -> None:
        self.seen += 1


@pytest.fixture
def watched(qtbot: QtBot) -> Iterator[Watched]:
    made = Watched(qtbot)
    made.watch.start()
    yield made
    made.watch.stop()


def test_a_key_or_a_click_in_an_app_window_is_the_person(watched: Watched) -> None:
    QTest.keyClick(watched.window, Qt.Key.Key_A)
    assert watched.seen == 1
    QTest.mouseClick(watched.window, Qt.MouseButton.LeftButton)
    assert watched.seen == 2
    assert watched.window.text() == "a"  # (the event still reaches the window)


def test_input_counts_only_after_the_idle_time_without_any(watched: Watched) -> None:
    watched.idle_s = 3600
    QTest.keyClick(watched.window, Qt.Key.Key_A)
    assert watched.seen == 0  # (the person is still here, setting up)
    watched.idle_s = 0
    QTest.keyClick(watched.window, Qt.Key.Key_B)
    assert watched.seen == 1


def test_input_in_a_window_that_sets_away_up_never_counts(watched: Watched) -> None:
    watched.setting_up.add(id(watched.setup.window()))
    QTest.keyClick(watched.setup, Qt.Key.Key_A)
    assert watched.seen == 0
    QTest.keyClick(watched.window, Qt.Key.Key_A)
    assert watched.seen == 1


def test_nothing_counts_once_stopped(watched: Watched) -> None:
    watched.watch.stop()
    QTest.keyClick(watched.window, Qt.Key.Key_A)
    assert watched.seen == 0


