"""Colours in the tool-input editor and diff views: keys, strings, numbers and literals
look different, diff lines show what was added or removed, and a hidden character always
stands out white on red."""

from __future__ import annotations

from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextDocument
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.widgets.json_highlight import (
    MAX_HIGHLIGHT_LINES,
    DiffHighlighter,
    JsonHighlighter,
)

RED = QColor("#C92A2A")


def coloured(text: str, highlighter_type: type[QSyntaxHighlighter], *, line: int = 0,
             large: bool = False) -> dict[str, str]:
    """Each formatted span of `line` and its foreground colour (or "marker" for white on
    red), as the highlighter leaves them on a real document."""
    document = QTextDocument()
    document.setPlainText(text)
    highlighter = highlighter_type(document)
    if large:
        highlighter.large = True  # type: ignore[attr-defined]
    highlighter.rehighlight()
    block = document.findBlockByNumber(line)
    spans: dict[str, str] = {}
    for fmt_range in block.layout().formats():
        span = block.text()[fmt_range.start:fmt_range.start + fmt_range.length]
        fmt = fmt_range.format
        marker = fmt.background().color() == RED and fmt.foreground().color() == QColor("white")
        spans[span] = "marker" if marker else fmt.foreground().color().name().upper()
    return spans


def test_json_tokens_each_have_their_colour(qtbot: QtBot) -> None:
    spans = coloured('  "command": "ls -la", "n": -1.5e3, "ok": true, "x": null', JsonHighlighter)
    assert spans['"command"'] == spans['"n"'] == "#364FC7"
    assert spans['"ls -la"'] == "#2B8A3E"
    assert spans["-1.5e3"] == "#C2255C"
    assert spans["true"] == spans["null"] == "#E8590C"
    assert len({spans['"command"'], spans['"ls -la"'], spans["-1.5e3"], spans["true"]}) == 4


def test_a_hidden_character_escape_stands_out_even_inside_a_string(qtbot: QtBot) -> None:
    spans = coloured('"command": "rm\\u200b -rf \\u0041"', JsonHighlighter)
    assert spans["\\u200b"] == "marker"
    assert "\\u0041" not in spans  # a plain letter is not hidden


def test_a_large_text_only_colours_hidden_characters(qtbot: QtBot) -> None:
    spans = coloured('"command": "a\\u202eb", "n": 1', JsonHighlighter, large=True)
    assert spans == {"\\u202e": "marker"}


def test_lines_past_the_limit_stay_plain(qtbot: QtBot) -> None:
    text = '"k": 1\n' * (MAX_HIGHLIGHT_LINES + 1)
    assert coloured(text, JsonHighlighter, line=MAX_HIGHLIGHT_LINES - 1)
    assert coloured(text, JsonHighlighter, line=MAX_HIGHLIGHT_LINES) == {}


def test_diff_lines_show_what_was_added_and_removed(qtbot: QtBot) -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old line\n+new line\n context"
    assert coloured(diff, DiffHighlighter, line=2) == {"@@ -1 +1 @@": "#1864AB"}
    assert coloured(diff, DiffHighlighter, line=3) == {"-old line": "#C92A2A"}
    assert coloured(diff, DiffHighlighter, line=4) == {"+new line": "#2B8A3E"}
    assert coloured(diff, DiffHighlighter, line=5) == {}


def test_a_hidden_character_marker_stands_out_in_a_diff(qtbot: QtBot) -> None:
    spans = coloured("+echo ⟨U+200B⟩ done", DiffHighlighter)
    assert spans["⟨U+200B⟩"] == "marker"
