"""How many requests wait, in the main window: always in the queue's header; without a
system tray also in the title and a status-bar badge; "open the oldest" only when one
waits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QLabel, QMainWindow
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.forms.ui_main_window import Ui_MainWindow
from qoder_desktop.ui.windows.pending_display import APP_TITLE, PendingDisplay


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[tuple[QMainWindow, Ui_MainWindow, PendingDisplay]]:
    window = QMainWindow()
    ui = Ui_MainWindow()
    ui.setupUi(window)
    qtbot.addWidget(window)
    display = PendingDisplay(window, ui)
    window.show()
    qtbot.waitExposed(window)
    yield window, ui, display


def badge(window: QMainWindow) -> QLabel:
    found = window.findChild(QLabel, "pendingBadge")
    assert found is not None
    return found


def test_with_a_tray_the_count_shows_in_the_queue_header_only(window) -> None:
    main, ui, display = window
    display.show_count(3)
    assert ui.queueHeader.text() == "Waiting for you (3)"
    assert main.windowTitle() == APP_TITLE
    assert not badge(main).isVisible()
    assert ui.openNextAction.isEnabled()


def test_without_a_tray_the_title_and_a_badge_carry_the_count(window) -> None:
    main, ui, display = window
    display.tray_available = False
    display.show_count(2)
    assert main.windowTitle() == f"{APP_TITLE} (2 pending)"
    assert badge(main).isVisible() and badge(main).text() == "2 pending"
    display.show_count(0)
    assert main.windowTitle() == APP_TITLE
    assert not badge(main).isVisible()
    assert ui.queueHeader.text() == "Waiting for you"
    assert not ui.openNextAction.isEnabled()
