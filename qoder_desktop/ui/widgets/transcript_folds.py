"""Folds in the transcript: a tool call's output under its ▶/▼ row, an edited call's
original and the CLI's instructions to the model under a "▸" row.

Blocks carry their fold in block-format properties (the document is the only record, so
trimming old blocks or re-showing a session needs no bookkeeping beyond which folds are
closed). Hidden blocks are invisible `QTextBlock`s: their text stays in the document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6 import QtGui  # its text classes are built when first used, after the first frame

if TYPE_CHECKING:
    from PySide6.QtGui import QTextBlock, QTextBlockFormat, QTextCursor, QTextDocument

USER_PROPERTY = 0x100000
"""`QTextFormat.Property.UserProperty`, the first property id free for the app (as a
number: taking `QTextFormat` from its module builds the class with its enums)."""

CALL_PROPERTY = USER_PROPERTY + 2
"""On every block of a tool call's line: the call's ``tool_use_id``."""
FOLD_PROPERTY = USER_PROPERTY + 3
"""On a block that a fold hides: the fold's key."""
TOGGLE_PROPERTY = USER_PROPERTY + 4
"""On the row a click opens or closes a fold with: the fold's key."""
PARENT_PROPERTY = USER_PROPERTY + 5
"""On a folded block inside another fold (details under a call's output): the outer key."""

OUTPUT_FOLD = "output:"
ORIGINAL_FOLD = "original:"
DETAILS_FOLD = "details:"
OPEN_GLYPH, CLOSED_GLYPH = "▼", "▶"
OPEN_SMALL, CLOSED_SMALL = "▾", "▸"
SCAN_LIMIT = 5_000
"""Blocks searched back from the end for the call an edited call replaces."""


def marked(fmt: QTextBlockFormat, *, call: str | None = None, fold: str | None = None,
           toggle: str | None = None, parent: str | None = None) -> QTextBlockFormat:
    """`fmt` with the fold properties given (a copy when any is set)."""
    if not (call or fold or toggle or parent):
        return fmt
    fmt = QtGui.QTextBlockFormat(fmt)
    for prop, value in ((CALL_PROPERTY, call), (FOLD_PROPERTY, fold),
                        (TOGGLE_PROPERTY, toggle), (PARENT_PROPERTY, parent)):
        if value:
            fmt.setProperty(prop, value)
    return fmt


def _prop(block: QTextBlock, prop: int) -> str:
    value = block.blockFormat().property(prop)
    return value if isinstance(value, str) else ""


class Folds:
    """Which folds of one transcript document are closed, and opening/closing them."""

    def __init__(self, document: QTextDocument) -> None:
        self._doc = document
        self._closed: set[str] = set()
        self._to_close: list[str] = []
        self._details = 0
        self._dirty: tuple[int, int] | None = None

    def clear(self) -> None:
        """Forget every fold (the document was cleared)."""
        self._closed.clear()
        self._to_close.clear()

    def is_open(self, key: str) -> bool:
        """True when the fold `key` shows its blocks."""
        return key not in self._closed

    def new_details_key(self) -> str:
        """A key for a new "details" fold."""
        self._details += 1
        return f"{DETAILS_FOLD}{self._details}"

    def close_later(self, key: str) -> None:
        """Start the fold `key` closed (applied by the next `settle`)."""
        self._to_close.append(key)

    def replace_call(self, cursor: QTextCursor, call_id: str) -> bool:
        """Empty the blocks of the call line `call_id` and put `cursor` in the first one
        (False, cursor untouched: the call is not shown)."""
        block = self._doc.lastBlock()
        last = None
        for _ in range(SCAN_LIMIT):
            if not block.isValid():
                break
            if _prop(block, CALL_PROPERTY) == call_id:
                last = block
                break
            block = block.previous()
        if last is None:
            return False
        first = last
        while first.previous().isValid() and _prop(first.previous(), CALL_PROPERTY) == call_id:
            first = first.previous()
        for key in (f"{OUTPUT_FOLD}{call_id}",):
            self._closed.discard(key)
        cursor.setPosition(first.position())
        cursor.setPosition(last.position() + last.length() - 1,
                           QtGui.QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        cursor.setBlockFormat(QtGui.QTextBlockFormat())
        return True

    def settle(self, start: int, end: int, output: str | None, *, folded: bool) -> None:
        """Hide what starts closed among the blocks from `start` to `end`: new folds, and
        a call's output when it is long (`folded`) or its fold was closed."""
        if output and folded:  # (this hides the new output blocks too)
            self._set_closed(output, True, near=self._doc.findBlock(start), later=True)
            if not self._to_close:
                return
        elif not self._to_close and not (output and output in self._closed):
            return  # nothing new starts closed (most lines): no relayout
        self._closed.update(self._to_close)
        self._to_close.clear()
        block = self._doc.findBlock(start)
        while block.isValid() and block.position() <= end:
            fold = _prop(block, FOLD_PROPERTY)
            parent = _prop(block, PARENT_PROPERTY)
            if (fold and fold in self._closed) or (parent and parent in self._closed):
                block.setVisible(False)
            block = block.next()
        self._mark(start, end + 1, later=True)

    def relayout(self) -> None:
        """Lay out again what `settle` hid (once per batch of lines: one layout pass)."""
        if self._dirty is not None:
            (start, end), self._dirty = self._dirty, None
            end = min(end, self._doc.characterCount())
            if end > start:
                self._doc.markContentsDirty(start, end - start)

    def _mark(self, start: int, end: int, *, later: bool) -> None:
        if later:
            old = self._dirty
            self._dirty = (start, end) if old is None else (min(old[0], start),
                                                             max(old[1], end))
        else:
            self._doc.markContentsDirty(start, max(0, end - start))

    def toggle(self, block: QTextBlock) -> bool:
        """Open or close the fold whose row `block` is (False: it is no such row)."""
        key = _prop(block, TOGGLE_PROPERTY)
        if not key:
            return False
        self._set_closed(key, key not in self._closed, near=block)
        return True

    def _set_closed(self, key: str, closed: bool, near: QTextBlock | None = None, *,
                    later: bool = False) -> None:
        """Close or open `key`: every row of it (a call's ▶ and its "N lines" row) shows
        the new state, and its blocks hide or show."""
        if closed:
            self._closed.add(key)
        else:
            self._closed.discard(key)
        block = self._first_row(key, near)
        first_position = block.position()
        while block.isValid():
            fmt = block.blockFormat()
            if fmt.property(TOGGLE_PROPERTY) == key:
                _set_glyph(block, closed)
            fold, parent = fmt.property(FOLD_PROPERTY), fmt.property(PARENT_PROPERTY)
            if fold == key or parent == key:
                visible = not closed and fold not in self._closed and parent not in self._closed
                block.setVisible(visible)
            block = block.next()
        self._mark(first_position, self._doc.characterCount(), later=later)

    def _first_row(self, key: str, near: QTextBlock | None) -> QTextBlock:
        """The earliest row of `key` before `near` (the end): a call's own row, else the
        last one found within `SCAN_LIMIT` blocks."""
        block = near if near is not None else self._doc.lastBlock()
        first = block
        for _ in range(SCAN_LIMIT):
            if not block.isValid():
                break
            if _prop(block, TOGGLE_PROPERTY) == key:
                first = block
                if _prop(block, CALL_PROPERTY) or not key.startswith(OUTPUT_FOLD):
                    break
            block = block.previous()
        return first


_GLYPHS = {OPEN_GLYPH: CLOSED_GLYPH, OPEN_SMALL: CLOSED_SMALL}
"""Each open glyph and its closed twin."""


def _set_glyph(block: QTextBlock, closed: bool) -> None:
    """Show a fold row's first character as its closed or open glyph."""
    cursor = QtGui.QTextCursor(block)
    cursor.movePosition(QtGui.QTextCursor.MoveOperation.Right,
                        QtGui.QTextCursor.MoveMode.KeepAnchor)
    current = cursor.selectedText()
    for open_glyph, closed_glyph in _GLYPHS.items():
        if current in (open_glyph, closed_glyph):
            cursor.insertText(closed_glyph if closed else open_glyph, cursor.charFormat())
            return
