"""The numbers of the few `Qt` namespace enums the main window uses before its first frame.

The first use of PySide6's `Qt` namespace builds all of its ~90 enums as Python enums
(`Qt.Key` alone has ~470 members): about 25 ms of GUI-thread CPU, more than a sixth of
a bare window's whole start. Code that runs before the first frame uses these numbers
instead (item-data roles are plain ints to a model; a Qt property takes an enum's
number); code that runs later uses `QtCore.Qt` as usual. `tests/ui/test_qt_numbers.py`
checks each against Qt's own value, and `tests/ui/test_first_frame.py` that the first
frame is reached without the namespace.
"""

from __future__ import annotations

DISPLAY_ROLE = 0
"""`Qt.ItemDataRole.DisplayRole`"""
TOOLTIP_ROLE = 3
"""`Qt.ItemDataRole.ToolTipRole`"""
FONT_ROLE = 6
"""`Qt.ItemDataRole.FontRole`"""
TEXT_ALIGNMENT_ROLE = 7
"""`Qt.ItemDataRole.TextAlignmentRole`"""
FOREGROUND_ROLE = 9
"""`Qt.ItemDataRole.ForegroundRole`"""
USER_ROLE = 0x0100
"""`Qt.ItemDataRole.UserRole`: the first role an application defines."""

ALIGN_CENTER = 0x0084
"""`Qt.AlignmentFlag.AlignCenter` (as a model's `TextAlignmentRole` answer)."""
ELIDE_MIDDLE = 2
"""`Qt.TextElideMode.ElideMiddle` (for a view's `textElideMode` property)."""

TAB_FOCUS = 1
"""`Qt.FocusPolicy.TabFocus` (for the `focusPolicy` property)."""
RICH_TEXT = 1
"""`Qt.TextFormat.RichText` (for a label's `textFormat` property)."""
SELECTABLE_BY_MOUSE_AND_KEYBOARD = 0x01 | 0x02
"""`Qt.TextInteractionFlag.TextSelectableByMouse | TextSelectableByKeyboard` (for the
`textInteractionFlags` property)."""
LINKS_ACCESSIBLE = 0x04 | 0x08
"""`Qt.TextInteractionFlag.LinksAccessibleByMouse | LinksAccessibleByKeyboard` (for a
label's `textInteractionFlags` property)."""
