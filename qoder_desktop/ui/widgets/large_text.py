"""Large tool inputs: the note for one too large to analyse (the bound itself is
`rules.offer.ANALYSIS_LIMIT`, shared with the phone), display-only soft breaks and a
linear diff.

Qt lays out one text block at a time, and one block of a megabyte takes seconds on every
edit. Long lines are therefore shown as several blocks of at most `DISPLAY_CHUNK`
characters; the blocks that continue a line carry a `SOFT` block-format property, so the
text read back (`soft_broken_text`) is exactly the text loaded plus the user's edits.
Large texts go in over several loop turns (`SoftBreakLoader`, `ChunkedLoader`).
A block format survives undo and is dropped with its block when the break before it is
deleted; Enter and paste insert plain (hard) blocks (`SoftBreakEdit`).
"""

from __future__ import annotations

import bisect

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import (
    QKeyEvent,
    QTextBlockFormat,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit

from qoder_desktop.rules.offer import ANALYSIS_LIMIT

DISPLAY_CHUNK = 1000
"""The longest line piece put into one text block of a large text."""
SOFT = int(QTextFormat.Property.UserProperty) + 1
"""Block-format property: the line break before this block is for display only."""


def too_large_note(size: int) -> str:
    """Why an input is not analysed, in the dialog's words."""
    return (f"This input is too large to analyse ({size:,} characters; the limit is "
            f"{ANALYSIS_LIMIT:,}), so nothing is highlighted and no session rule is "
            "offered. Read it yourself: you can allow it once or deny it, and the "
            "agent's CLI still decides.")


def _cut(line: str, start: int) -> int:
    """Where the piece of `line` starting at `start` ends: never inside a `\\uXXXX`."""
    end = start + DISPLAY_CHUNK
    if end >= len(line):
        return len(line)
    slash = line.rfind("\\", end - 11, end)
    return slash if slash > start else end


def _split_long(text: str) -> tuple[list[str], list[int], list[int]]:
    """Display blocks, the numbers of those that continue a line, and the original
    offsets where those continuations start (one pass; lines are cut in C)."""
    lines = text.split("\n")
    if max(map(len, lines)) <= DISPLAY_CHUNK:  # (the common case: nothing to cut)
        return lines, [], []
    pieces: list[str] = []
    soft: list[int] = []
    breaks: list[int] = []
    offset = 0
    for line in lines:
        size = len(line)
        if size <= DISPLAY_CHUNK:
            pieces.append(line)
        else:
            start = 0
            while start < size:
                end = _cut(line, start)
                if start:
                    soft.append(len(pieces))
                    breaks.append(offset + start)
                pieces.append(line[start:end])
                start = end
        offset += size + 1
    return pieces, soft, breaks


def display_pieces(text: str) -> tuple[list[str], list[int]]:
    """`text` as display blocks, and the numbers of the blocks that continue a line."""
    pieces, soft, _breaks = _split_long(text)
    return pieces, soft


def display_breaks(text: str) -> tuple[str, list[int]]:
    """`text` with display-only breaks, and the original offsets where breaks went in."""
    pieces, _soft, breaks = _split_long(text)
    return ("\n".join(pieces) if breaks else text), breaks


def shifted(offset: int, breaks: list[int]) -> int:
    """Where original `offset` lands once the `display_breaks` breaks are inserted."""
    return offset + bisect.bisect_right(breaks, offset)


def soft_broken_text(document: QTextDocument) -> str:
    """The document's raw text (no-break spaces kept), soft breaks removed."""
    parts = document.toRawText().split("\u2029")
    out: list[str] = []
    block = document.begin()
    for number, part in enumerate(parts):
        if number and not (block.isValid() and block.blockFormat().property(SOFT)):
            out.append("\n")
        out.append(part)
        block = block.next()
    return "".join(out)


def is_soft(block_format: QTextBlockFormat) -> bool:
    """True when the break before a block with this format is for display only."""
    return bool(block_format.property(SOFT))


class SoftBreakEdit(QPlainTextEdit):
    """A plain-text editor whose Enter and paste always insert hard line breaks.

    A new block normally copies the current block's format, which would make a line
    break typed inside a soft-broken line soft as well (and so lost on read-back).
    """

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Plain Enter inserts a plain block; every other key (and chord) is Qt's."""
        plain = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier == \
            Qt.KeyboardModifier.NoModifier
        if (plain and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and not self.isReadOnly()):
            self.textCursor().insertBlock(QTextBlockFormat())
            self.ensureCursorVisible()
            return
        super().keyPressEvent(event)

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Paste and drop as plain text, each line break a hard one."""
        cursor = self.textCursor()
        cursor.beginEditBlock()
        for number, line in enumerate(source.text().replace("\r\n", "\n").split("\n")):
            if number:
                cursor.insertBlock(QTextBlockFormat())
            cursor.insertText(line)
        cursor.endEditBlock()
        self.setTextCursor(cursor)
        self.ensureCursorVisible()


def unified_linear(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff in one hunk from the first to the last changed line, in linear time.

    Both texts end with a line break. Lines between two distant edits appear as removed
    and added again: correct, if not minimal, and fast on megabytes (difflib is not).
    Inside long lines, unchanged characters more than `DIFF_CONTEXT` away from the change
    are replaced by a "[… N unchanged characters …]" note: the diff shows the change, the
    editor holds the text.
    """
    if old == new:
        return ""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    low, high = 0, min(len(a), len(b))
    while low < high:  # longest common prefix of lines
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    prefix = low
    low, high = 0, min(len(a), len(b)) - prefix
    while low < high:  # longest common suffix of lines, not overlapping the prefix
        mid = (low + high + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            low = mid
        else:
            high = mid - 1
    suffix = low
    start = max(prefix - 3, 0)
    a_end, b_end = len(a) - suffix, len(b) - suffix
    tail = min(suffix, 3)

    def span(first: int, count: int) -> str:
        if count == 1:
            return str(first + 1)
        return f"{first + 1 if count else first},{count}"

    out = [f"--- {old_name}\n", f"+++ {new_name}\n",
           f"@@ -{span(start, a_end + tail - start)} +{span(start, b_end + tail - start)} @@\n"]
    out += [" " + _elided(line) for line in a[start:prefix]]
    removed, added = _around_change("".join(a[prefix:a_end]), "".join(b[prefix:b_end]))
    out += ["-" + line for line in removed.splitlines(keepends=True)]
    out += ["+" + line for line in added.splitlines(keepends=True)]
    out += [" " + _elided(line) for line in a[a_end:a_end + tail]]
    return "".join(out)


DIFF_CONTEXT = 300
"""Unchanged characters kept on each side of a change inside a long diff line."""


def _skipped(count: int) -> str:
    return f"[… {count:,} unchanged characters …]"


def _elided(line: str) -> str:
    """An unchanged (context) line, cut to its start when it is long."""
    if len(line) <= 4 * DIFF_CONTEXT:
        return line
    body = line.rstrip("\n")
    return body[:DIFF_CONTEXT] + _skipped(len(body) - DIFF_CONTEXT) + line[len(body):]


_SCAN = 1 << 16
"""Characters compared per slice when looking for a common prefix or suffix."""


def _common_prefix(x: str, y: str) -> int:
    """The length of the longest common prefix: slices of `_SCAN` characters compared
    in C up to the first that differs, then a binary search inside that one (linear)."""
    limit, done = min(len(x), len(y)), 0
    while done < limit:
        end = min(done + _SCAN, limit)
        if x[done:end] != y[done:end]:
            break
        done = end
    else:
        return limit
    low, high = done, end - 1  # x[:low] == y[:low]; they differ before `end`
    while low < high:
        mid = (low + high + 1) // 2
        if x[done:mid] == y[done:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(x: str, y: str, limit: int) -> int:
    """The length of the longest common suffix, at most `limit` (as `_common_prefix`)."""
    done = 0
    while done < limit:
        end = min(done + _SCAN, limit)
        if x[len(x) - end:len(x) - done] != y[len(y) - end:len(y) - done]:
            break
        done = end
    else:
        return limit
    low, high = done, end - 1
    while low < high:
        mid = (low + high + 1) // 2
        if x[len(x) - mid:len(x) - done] == y[len(y) - mid:len(y) - done]:
            low = mid
        else:
            high = mid - 1
    return low


def _around_change(old: str, new: str) -> tuple[str, str]:
    """The changed lines, with unchanged characters far from the change elided.

    Only the first changed line's start and the last one's end can be elided: the
    character-level common prefix and suffix lie within them.
    """
    head = _common_prefix(old, new)
    rest = min(len(old), len(new)) - head
    tail = _common_suffix(old, new, rest)
    out = []
    for text in (old, new):
        start = text[:head]
        end = text[len(text) - tail:]
        middle = text[head:len(text) - tail]
        if len(start) > 2 * DIFF_CONTEXT and "\n" not in start:
            start = _skipped(len(start) - DIFF_CONTEXT) + start[-DIFF_CONTEXT:]
        body_end = end.rstrip("\n")
        if len(body_end) > 2 * DIFF_CONTEXT and "\n" not in body_end:
            end = (body_end[:DIFF_CONTEXT] + _skipped(len(body_end) - DIFF_CONTEXT)
                   + end[len(body_end):])
        out.append(start + middle + end)
    return out[0], out[1]
