"""The permission-mode switch: a pick asks the app for the switch and keeps showing the
session's real mode until the app reports it; a risky mode switches only after the
person confirms it in the dialog; without a session it cannot be used."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QMessageBox
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.kinds import PermissionMode
from qoder_desktop.ui.widgets.mode_switch import MODE_TIP, ModeSwitcher


@pytest.fixture
def window(qtbot: QtBot) -> Iterator[QMainWindow]:
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    yield window


@pytest.fixture
def switcher(window: QMainWindow) -> ModeSwitcher:
    switcher = ModeSwitcher(window, window.menuBar().addMenu("&Session"))
    switcher.set_session("s1", PermissionMode.DEFAULT)
    return switcher


def requests(switcher: ModeSwitcher) -> list[tuple[str, PermissionMode, object]]:
    seen: list[tuple[str, PermissionMode, object]] = []
    switcher.mode_requested.connect(lambda *args: seen.append(args))
    return seen


def action(switcher: ModeSwitcher, mode: PermissionMode):
    return next(a for a in switcher.menu.actions() if a.text() == mode.value)


def open_box(window: QMainWindow) -> QMessageBox | None:
    box = window.findChild(QMessageBox, "confirmDangerousMode")
    return box if box is not None and box.isVisible() else None


def test_a_safe_pick_is_requested_and_the_real_mode_stays_shown(
        switcher: ModeSwitcher) -> None:
    seen = requests(switcher)
    action(switcher, PermissionMode.PLAN).trigger()
    assert seen == [("s1", PermissionMode.PLAN, None)]
    assert switcher.combo.currentData() == PermissionMode.DEFAULT.value
    assert action(switcher, PermissionMode.DEFAULT).isChecked()
    switcher.set_session("s1", PermissionMode.PLAN)  # the app reports the switch
    assert switcher.combo.currentData() == PermissionMode.PLAN.value
    assert action(switcher, PermissionMode.PLAN).isChecked()


def test_picking_the_current_mode_asks_for_nothing(switcher: ModeSwitcher) -> None:
    seen = requests(switcher)
    action(switcher, PermissionMode.DEFAULT).trigger()
    assert seen == []


def test_a_risky_mode_switches_only_once_the_person_confirms(
        switcher: ModeSwitcher, window: QMainWindow, qtbot: QtBot) -> None:
    seen = requests(switcher)
    switcher.combo.setFocus()
    qtbot.keyClick(switcher.combo, Qt.Key.Key_Down)  # acceptEdits
    qtbot.waitUntil(lambda: open_box(window) is not None)
    qtbot.keyClick(open_box(window), Qt.Key.Key_Escape)  # declined
    qtbot.waitUntil(lambda: open_box(window) is None)
    assert seen == []
    assert switcher.combo.currentData() == PermissionMode.DEFAULT.value

    action(switcher, PermissionMode.BYPASS).trigger()
    qtbot.waitUntil(lambda: open_box(window) is not None)
    box = open_box(window)
    assert box is not None and "bypassPermissions" in box.text()
    confirm = next(b for b in box.buttons()
                   if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
    qtbot.mouseClick(confirm, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(seen) == 1)
    session_id, mode, consent = seen[0]
    assert (session_id, mode) == ("s1", PermissionMode.BYPASS)
    assert isinstance(consent, ModeConsent)
    assert (consent.session_id, consent.mode) == ("s1", PermissionMode.BYPASS)
    assert switcher.combo.currentData() == PermissionMode.DEFAULT.value


def test_without_a_session_or_with_a_reason_the_switch_cannot_be_used(
        switcher: ModeSwitcher) -> None:
    seen = requests(switcher)
    switcher.set_session(None, PermissionMode.DEFAULT)
    assert not switcher.combo.isEnabled() and not switcher.menu.isEnabled()
    action(switcher, PermissionMode.PLAN).trigger()
    assert seen == []
    switcher.set_session("s2", PermissionMode.PLAN, why_not="The session has ended.")
    assert not switcher.combo.isEnabled()
    assert switcher.combo.toolTip() == "The session has ended."
    switcher.set_session("s2", PermissionMode.PLAN)
    assert switcher.combo.isEnabled() and switcher.combo.toolTip() == MODE_TIP
