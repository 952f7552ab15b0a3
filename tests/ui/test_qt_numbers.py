"""The numbers `qoder_desktop.ui.qt_numbers` stands in for are Qt's own."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from qoder_desktop.ui import qt_numbers

EXPECTED = {
    "DISPLAY_ROLE": Qt.ItemDataRole.DisplayRole,
    "TOOLTIP_ROLE": Qt.ItemDataRole.ToolTipRole,
    "FONT_ROLE": Qt.ItemDataRole.FontRole,
    "TEXT_ALIGNMENT_ROLE": Qt.ItemDataRole.TextAlignmentRole,
    "FOREGROUND_ROLE": Qt.ItemDataRole.ForegroundRole,
    "USER_ROLE": Qt.ItemDataRole.UserRole,
    "ALIGN_CENTER": Qt.AlignmentFlag.AlignCenter,
    "ELIDE_MIDDLE": Qt.TextElideMode.ElideMiddle,
    "TAB_FOCUS": Qt.FocusPolicy.TabFocus,
    "RICH_TEXT": Qt.TextFormat.RichText,
    "SELECTABLE_BY_MOUSE_AND_KEYBOARD": (Qt.TextInteractionFlag.TextSelectableByMouse
                                         | Qt.TextInteractionFlag.TextSelectableByKeyboard),
    "LINKS_ACCESSIBLE": (Qt.TextInteractionFlag.LinksAccessibleByMouse
                         | Qt.TextInteractionFlag.LinksAccessibleByKeyboard),
}


def test_every_number_is_listed_here() -> None:
    numbers = {name for name in vars(qt_numbers) if name.isupper()}
    assert numbers == set(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_number_is_qts_value(name: str) -> None:
    assert getattr(qt_numbers, name) == EXPECTED[name].value
