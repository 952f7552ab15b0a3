"""The pairing dialog: the offer's QR code and address, the phone's code, and Confirm —
an approving action — counted only for a click or key from a mouse or keyboard.

The injected-input tests need Qt's `xcb` platform on a real X server:
`test_keys_on_xcb.py` runs this module in a child pytest under a private Xvfb
(`xdotool` clicks and keys through XTEST, and through XSendEvent with ``--window``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.dialogs.input_origin import REFUSED_CLICK, REFUSED_KEY
from qoder_desktop.ui.windows.pairing_dialog import EXPIRED_TEXT, PairingDialog

URL = "https://192.168.1.20:8765/#pair=k3Jd8x2PqLz0aB7mW9eR4tYu1iO6pS5dF3gH2jK8lZc"
on_xcb = pytest.mark.skipif(os.environ.get("QT_QPA_PLATFORM") != "xcb",
                            reason="needs Qt's xcb platform (test_keys_on_xcb runs it)")


@pytest.fixture
def dialog(qtbot: QtBot) -> Iterator[tuple[PairingDialog, list[str], list[str]]]:
    """A shown pairing dialog whose phone claimed the offer; what it confirmed and
    refused."""
    shown = PairingDialog()
    qtbot.addWidget(shown)
    confirmed: list[str] = []
    refused: list[str] = []
    shown.confirmed.connect(confirmed.append)
    shown.refused.connect(refused.append)
    shown.show_offer(URL, datetime.now(UTC) + timedelta(minutes=5))
    shown.show()
    qtbot.waitExposed(shown)
    shown.resize(shown.size())  # (the window keeps the size it opened with)
    shown.show_claim("pairing-1", "Pixel 7", "0123 4567")
    qtbot.waitUntil(shown.confirm_button.isEnabled)
    yield shown, confirmed, refused
    shown.close()


def test_the_offer_shows_its_qr_code_address_and_time_left(qtbot: QtBot) -> None:
    shown = PairingDialog()
    qtbot.addWidget(shown)
    shown.show_offer(URL, datetime.now(UTC) + timedelta(minutes=4, seconds=30))
    assert shown.url_label.text() == URL
    assert not shown.qr_label.pixmap().isNull()
    assert shown.expiry_label.text() in ("Expires in 4:30", "Expires in 4:29")
    shown.show_offer(URL, datetime.now(UTC) - timedelta(seconds=1))
    assert shown.expiry_label.text() == EXPIRED_TEXT
    assert shown.qr_label.isHidden()


def test_the_address_can_be_copied_until_a_phone_claims_it(qtbot: QtBot) -> None:
    shown = PairingDialog()
    qtbot.addWidget(shown)
    shown.show_offer(URL, datetime.now(UTC) + timedelta(minutes=5))
    shown.show()
    QTest.mouseClick(shown.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == URL
    shown.show_claim("pairing-1", "Pixel 7", "0123 4567")
    assert shown.copy_button.isHidden()


def test_a_claimed_offer_shows_only_the_phone_and_its_code(qtbot: QtBot) -> None:
    """Once a phone claimed the token, the scan instructions and the used address go:
    what is left to read is the phone's name, its code and what to compare."""
    shown = PairingDialog()
    qtbot.addWidget(shown)
    shown.show_offer(URL, datetime.now(UTC) + timedelta(minutes=5))
    shown.show()
    assert shown.hint_label.isVisible() and shown.url_label.isVisible()
    qtbot.waitExposed(shown)
    shown.resize(shown.size())  # (the window keeps the size it opened with)
    shown.show_claim("pairing-1", "Pixel 7", "0123 4567")
    assert not shown.hint_label.isVisible() and not shown.url_label.isVisible()
    assert shown.phone_label.isVisible() and shown.code_label.isVisible()
    assert shown.match_label.isVisible()
    # In the window the offer sized, the three read as one block, not spread over it.
    shown.layout().activate()
    spacing = shown.layout().spacing()
    for upper, lower in ((shown.phone_label, shown.code_label),
                         (shown.code_label, shown.match_label)):
        assert lower.y() - (upper.y() + upper.height()) <= spacing, lower.objectName()
    for label in (shown.phone_label, shown.code_label, shown.match_label):
        assert label.height() <= label.heightForWidth(label.width()) + spacing, label.text()


@pytest.mark.arming
def test_confirm_is_inert_for_the_arming_delay_after_the_code_appears(qtbot: QtBot) -> None:
    shown = PairingDialog()
    qtbot.addWidget(shown)
    confirmed: list[str] = []
    shown.confirmed.connect(confirmed.append)
    shown.show()
    qtbot.waitExposed(shown)
    shown.resize(shown.size())  # (the window keeps the size it opened with)
    shown.show_claim("pairing-1", "Pixel 7", "0123 4567")
    assert not shown.confirm_button.isEnabled()
    shown.confirm_button.click()  # (a disabled button: nothing)
    assert confirmed == []
    qtbot.waitUntil(shown.confirm_button.isEnabled)
    QTest.mouseClick(shown.confirm_button, Qt.MouseButton.LeftButton)
    assert confirmed == ["pairing-1"]


def test_a_click_confirms_and_the_code_shows_with_the_phones_name(dialog) -> None:
    shown, confirmed, refused = dialog
    assert shown.code_text() == "0123 4567"
    assert "Pixel 7" in shown.phone_label.text()
    QTest.mouseClick(shown.confirm_button, Qt.MouseButton.LeftButton)
    assert confirmed == ["pairing-1"] and refused == []
    QTest.mouseClick(shown.confirm_button, Qt.MouseButton.LeftButton)
    assert confirmed == ["pairing-1"]  # (once)


def test_a_focused_confirm_takes_a_keyboards_space(dialog) -> None:
    shown, confirmed, _refused = dialog
    shown.confirm_button.setFocus()
    QTest.keyClick(shown.confirm_button, Qt.Key.Key_Space)
    assert confirmed == ["pairing-1"]


def test_escape_refuses_the_waiting_phone(dialog) -> None:
    shown, confirmed, refused = dialog
    QTest.keyClick(shown, Qt.Key.Key_Escape)
    assert refused == ["pairing-1"] and confirmed == []


def _xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=30)


def _point_at(button: QWidget) -> None:
    centre = button.mapToGlobal(button.rect().center())
    _xdotool("mousemove", "0", "0", "mousemove", "--sync", str(centre.x()), str(centre.y()))


def _refused(qtbot: QtBot, shown: PairingDialog, note: str) -> None:
    qtbot.waitUntil(shown.input_note.isVisible, timeout=5000)
    assert shown.input_note.text() == note


@on_xcb
def test_an_injected_click_on_confirm_pairs_nothing(dialog, qtbot: QtBot) -> None:
    shown, confirmed, _refused_ids = dialog
    _point_at(shown.confirm_button)
    _xdotool("click", "1")
    _refused(qtbot, shown, REFUSED_CLICK)
    assert confirmed == [] and shown.pairing_id() == "pairing-1"


@on_xcb
def test_an_injected_space_on_a_focused_confirm_pairs_nothing(dialog, qtbot: QtBot) -> None:
    shown, confirmed, _refused_ids = dialog
    shown.activateWindow()
    shown.confirm_button.setFocus()
    qtbot.waitUntil(shown.confirm_button.hasFocus)
    _xdotool("key", "space")
    _refused(qtbot, shown, REFUSED_KEY)
    assert confirmed == []


@on_xcb
def test_a_click_sent_with_xsendevent_pairs_nothing(dialog, qtbot: QtBot) -> None:
    shown, confirmed, _refused_ids = dialog
    _point_at(shown.confirm_button)
    _xdotool("click", "--window", str(int(shown.winId())), "1")
    _refused(qtbot, shown, REFUSED_CLICK)
    assert confirmed == []
