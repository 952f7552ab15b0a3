"""A word-wrapped QLabel that remembers its height for a width while its text stays.

Qt's `QLabel::heightForWidth` lays the whole text out again on every call (a label
selectable by mouse lays its document out at the asked width and back again), and the
layouts ask it many times per pass: `QWidgetItem::minimumHeightForWidth` is not cached
by Qt. Showing a decision dialog asked its header labels ~120 times; with this cache
each (width, text) is laid out once, and the height is Qt's own answer.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QWidget

_CACHE_SIZE = 8
_RESETS = frozenset({QEvent.Type.FontChange, QEvent.Type.StyleChange,
                     QEvent.Type.LayoutDirectionChange, QEvent.Type.ContentsRectChange})
"""Events after which the same text may need another height (style sheet polish
sends FontChange and ContentsRectChange)."""


class WrapLabel(QLabel):
    """A QLabel whose `heightForWidth` is Qt's, computed once per (width, text).

    The heights are forgotten when the font, style, margins or wrapping change.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._heights: dict[tuple[int, str], int] = {}

    def heightForWidth(self, width: int) -> int:
        """The height the text needs at `width` (Qt's answer, remembered)."""
        key = (width, self.text())
        height = self._heights.get(key)
        if height is None:
            if len(self._heights) >= _CACHE_SIZE:
                self._heights.clear()
            height = self._heights[key] = super().heightForWidth(width)
        return height

    def setWordWrap(self, on: bool) -> None:
        """Wrap (or not) the text; forgets the heights."""
        self._heights.clear()
        super().setWordWrap(on)

    def setTextFormat(self, text_format: Qt.TextFormat) -> None:
        """Set how the text is read; forgets the heights."""
        self._heights.clear()
        super().setTextFormat(text_format)

    def setMargin(self, margin: int) -> None:
        """Set the margin; forgets the heights."""
        self._heights.clear()
        super().setMargin(margin)

    def setIndent(self, indent: int) -> None:
        """Set the indent; forgets the heights."""
        self._heights.clear()
        super().setIndent(indent)

    def changeEvent(self, event: QEvent) -> None:
        """A new font, style or margins may change the heights: forget them."""
        if event.type() in _RESETS:
            self._heights.clear()
        super().changeEvent(event)
