"""Syntax colours for the tool-input editor and diff views: JSON tokens, diff lines,
and hidden-character escapes and markers (white on red).

Formats only: the text itself is never parsed as rich text.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

from qoder_desktop.ui.widgets.large_text import is_soft

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(?=\s*:)|"(?:[^"\\]|\\.)*"?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?'
                    r"|\btrue\b|\bfalse\b|\bnull\b")
_HIDDEN_ESCAPE = re.compile(r"\\u(?:00[01][0-9a-fA-F]|007[fF]|008[0-9a-fA-F]|009[0-9a-fA-F]"
                            r"|20[0-6][0-9a-fA-F]|00[aA]0|1680|3000|[fF][eE][fF][fF]"
                            r"|[dD][89abAB][0-9a-fA-F]{2}|[eE][0-9a-fA-F]{3}|[fF][0-8][0-9a-fA-F]{2})")

MAX_HIGHLIGHT_LINES = 3000
"""Lines past this are left uncoloured: colouring costs time, and every
`QSyntaxHighlighter.setFormat` call drops a reference to None under PySide6 6.12 on
Python 3.11 (see the project report), so huge documents are not worth the risk."""
_MARKER_TEXT = re.compile(r"⟨[^⟩\n]{1,80}⟩")


def _format(color: str, *, bold: bool = False, background: str | None = None) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    if background:
        fmt.setBackground(QColor(background))
    return fmt


def marker_format() -> QTextCharFormat:
    """White on red: how hidden-character markers and escapes stand out."""
    return _format("#FFFFFF", bold=True, background="#C92A2A")


class DiffHighlighter(QSyntaxHighlighter):
    """Colours a unified diff: additions, removals, hunk headers, file headers."""

    def highlightBlock(self, text: str) -> None:
        """Colour one diff line by its first character; flag hidden-character markers."""
        if self.currentBlock().blockNumber() >= MAX_HIGHLIGHT_LINES or len(text) > 20_000:
            return
        fmt = QTextCharFormat()
        if text.startswith(("+++", "---")):
            fmt.setFontWeight(QFont.Weight.DemiBold)
        elif text.startswith("+"):
            fmt.setBackground(QColor("#D3F9D8"))
            fmt.setForeground(QColor("#2B8A3E"))
        elif text.startswith("-"):
            fmt.setBackground(QColor("#FFE3E3"))
            fmt.setForeground(QColor("#C92A2A"))
        elif text.startswith("@@"):
            fmt.setForeground(QColor("#1864AB"))
        if text[:1] in ("+", "-", "@"):
            self.setFormat(0, len(text), fmt)
        for pattern in (_MARKER_TEXT, _HIDDEN_ESCAPE):
            for match in pattern.finditer(text):
                self.setFormat(match.start(), match.end() - match.start(), marker_format())


class JsonHighlighter(QSyntaxHighlighter):
    """Colours JSON keys, strings, numbers and literals; flags hidden-character escapes."""

    KEY = _format("#364FC7", bold=True)
    STRING = _format("#2B8A3E")
    NUMBER = _format("#C2255C")
    LITERAL = _format("#E8590C", bold=True)
    HIDDEN = marker_format()
    large = False
    """Set for a large text: only hidden-character escapes are coloured (cheaply)."""

    def highlightBlock(self, text: str) -> None:
        """Colour one line (JSON from `pretty_json` keeps each string on one line)."""
        if self.large:
            if "\\u" in text:
                for match in _HIDDEN_ESCAPE.finditer(text):
                    self.setFormat(match.start(), match.end() - match.start(), self.HIDDEN)
            return
        block = self.currentBlock()
        if block.blockNumber() >= MAX_HIGHLIGHT_LINES or len(text) > 20_000:
            return
        if is_soft(block.blockFormat()) or is_soft(block.next().blockFormat()):
            # A piece of a long line: tokens may start in another block.
            for match in _HIDDEN_ESCAPE.finditer(text):
                self.setFormat(match.start(), match.end() - match.start(), self.HIDDEN)
            return
        for match in _TOKEN.finditer(text):
            token = match.group()
            if token.startswith('"'):
                is_key = text[match.end():].lstrip().startswith(":")
                fmt = self.KEY if is_key else self.STRING
            elif token in ("true", "false", "null"):
                fmt = self.LITERAL
            else:
                fmt = self.NUMBER
            self.setFormat(match.start(), match.end() - match.start(), fmt)
        for match in _HIDDEN_ESCAPE.finditer(text):
            self.setFormat(match.start(), match.end() - match.start(), self.HIDDEN)
