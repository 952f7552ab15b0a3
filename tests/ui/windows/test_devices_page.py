"""Settings → Devices as a person reads it: every line wraps to the page's width (no
sentence, address or fingerprint runs off to the right), a paired device's name is never
cut short, and a revoked device is listed but shown as one that no longer answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QScrollArea
from pytestqt.qtbot import QtBot

from qoder_desktop.config.settings import AwaySettings, Settings
from qoder_desktop.ui.windows.devices_page import DeviceRow, DevicesPage, fingerprint_lines
from qoder_desktop.ui.windows.settings_dialog import SettingsDialog

FINGERPRINT = ":".join(f"{i * 7 % 256:02X}" for i in range(32))
URL = "https://[fd7a:115c:a1e0:ab12:4843:cd96:6258:b240]:8765"


@dataclass
class Status:
    """Away mode on at a long (IPv6) address, as the core reports it."""

    on: bool = True
    url: str | None = URL
    ca_url: str | None = "http://[fd7a:115c:a1e0:ab12:4843:cd96:6258:b240]:8766/desk-ca.crt"
    fingerprint: str | None = FINGERPRINT
    phones: int = 1
    ends_at: datetime | None = None
    why_off: str | None = None


def _shown_page(qtbot: QtBot) -> tuple[SettingsDialog, DevicesPage]:
    # (an address chosen earlier that this machine no longer has: the longest entry)
    far = "fd7a:115c:a1e0:ab12:4843:cd96:6258:b240:" + "1234:" * 8
    dialog = SettingsDialog(Settings(away=AwaySettings(host=far.rstrip(":"))))
    qtbot.addWidget(dialog)
    page = dialog.show_devices_page()
    dialog.show()
    qtbot.waitExposed(dialog)
    page.show_status(Status())
    page.show_devices([
        DeviceRow("a", "Galaxy S23 Ultra of the kitchen (3f9a1c)", "30 Nov 09:12",
                  "02 Dec 15:41", False, "can answer"),
        DeviceRow("b", "iPhone (b27e0f)", "12 Nov 18:03", "never", True,
                  "revoked 28 Nov 19:20")])
    return dialog, page


def test_nothing_on_the_devices_page_runs_off_to_the_right(qtbot: QtBot) -> None:
    dialog, page = _shown_page(qtbot)
    scroll = page.findChild(QScrollArea, "devicesScroll")
    assert scroll is not None
    qtbot.waitUntil(lambda: scroll.widget().width() <= scroll.viewport().width())
    assert scroll.widget().minimumSizeHint().width() <= scroll.viewport().width()
    for label in scroll.widget().findChildren(QLabel):
        if label.isVisibleTo(dialog) and label.text():
            right = label.mapTo(scroll.viewport(), label.rect().topRight()).x()
            assert right <= scroll.viewport().width(), label.text()[:60]


def test_the_fingerprint_shows_in_lines_of_the_same_characters(qtbot: QtBot) -> None:
    _dialog, page = _shown_page(qtbot)
    lines = page.fingerprint_label.text().split("\n")
    assert lines == [FINGERPRINT[:47], FINGERPRINT[48:]]
    assert fingerprint_lines(FINGERPRINT).replace("\n", ":") == FINGERPRINT
    assert page.listening_label.text() == f"Phones can answer at {URL} — only paired devices."


def test_device_names_are_whole_and_a_revoked_one_is_greyed(qtbot: QtBot) -> None:
    _dialog, page = _shown_page(qtbot)
    tree = page.devices_tree
    for row in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(row)
        assert item is not None
        needed = tree.fontMetrics().horizontalAdvance(item.text(0))
        assert tree.header().sectionSize(0) >= needed, item.text(0)
    revoked = tree.topLevelItem(1)
    assert revoked is not None and revoked.text(3).startswith("revoked")
    grey = page.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
    assert revoked.foreground(0).color() == grey
    can_answer = tree.topLevelItem(0)
    assert can_answer is not None and can_answer.foreground(0).color() != grey
