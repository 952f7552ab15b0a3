"""What Qt lays out for a preview is bounded, and laid out once (offscreen, real widgets).

Qt makes every position of a table's grid a cell and lays it out on the GUI thread; a
scroll bar that appears after the first layout narrows the view and Qt lays the whole
document out again (a table of spans blocked the loop 0.5 s).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QTextDocument, QTextTable

from qoder_desktop.preview.html import HtmlRebuilder, normalize_html
from qoder_desktop.preview.sanitize import MAX_TABLE_GRID
from qoder_desktop.ui.widgets.preview import PreviewPane


def _show(qtbot, pane: PreviewPane, text: str, kind: str):  # type: ignore[no-untyped-def]
    pane.show_preview(text, kind)
    qtbot.waitUntil(lambda: not pane.rendering)  # long previews are rendered in stages
    return pane.browser.last_preview


def _grid(pane: PreviewPane) -> int:
    frames = pane.browser.document().rootFrame().childFrames()
    return sum(t.rows() * t.columns() for t in frames if isinstance(t, QTextTable))


def _table(rows: list[str]) -> str:
    return "<table>" + "".join(f"<tr>{row}</tr>" for row in rows) + "</table>"


def _cells(rows: int, columns: int, attributes: str = "", first: int = 0) -> list[str]:
    return ["".join(f"<td{attributes}>r{r}c{c}</td>" for c in range(columns))
            for r in range(first, rows)]


HOSTILE_TABLES = {
    "spans 20×20": _table(_cells(20, 50, " colspan=20 rowspan=20")),
    "rowspans push cells right": _table(_cells(20, 50, " rowspan=8")),
    "one wide header": _table(_cells(1, 50, " colspan=8") + _cells(20, 50, first=1)),
    "one wide row over short ones": _table(_cells(1, 500) + _cells(99, 1, first=1)),
}


@pytest.mark.parametrize("name", list(HOSTILE_TABLES))
def test_a_hostile_table_lays_out_a_bounded_grid_and_shows_every_cell(qtbot, pane, name):
    html = HOSTILE_TABLES[name]
    preview = _show(qtbot, pane, html, "html")
    assert _grid(pane) <= MAX_TABLE_GRID
    cells = re.findall(r">(r\d+c\d+)<", html)
    assert sorted(pane.browser.toPlainText().split()) == sorted(cells)
    assert pane.banner.isVisible() and pane.banner.text() == (
        ("Simplified: " if preview.simplified else "") + preview.reason)


def test_a_markdown_table_padded_over_bare_lines_is_not_laid_out_as_one(qtbot, pane):
    table = "|" + "h|" * 30 + "\n|" + "-|" * 30 + "\n" + "x\n" * 300
    _show(qtbot, pane, table, "markdown")
    assert _grid(pane) == 0 and pane.banner.text().startswith("Simplified:")
    assert pane.browser.toPlainText().count("x") == 300


def test_an_ordinary_table_is_still_a_table_with_its_spans(pane):
    html = _table(["<th colspan=3>Plan</th>",
                   "<td rowspan=2>a</td><td>b</td><td>c</td>", "<td>d</td><td>e</td>"])
    pane.show_preview(html, "html")
    table = next(t for t in pane.browser.document().rootFrame().childFrames()
                 if isinstance(t, QTextTable))
    assert (table.rows(), table.columns()) == (3, 3)
    assert table.cellAt(0, 0).columnSpan() == 3 and table.cellAt(1, 0).rowSpan() == 2
    assert not pane.banner.isVisible()


def test_a_long_preview_is_laid_out_at_the_width_it_is_shown_at(qtbot, pane):
    """A short message, then a long preview: the text keeps its width (one layout)."""
    pane.show_message("Point at an option to see its preview.")
    width = pane.browser.viewport().width()
    _show(qtbot, pane, "\n\n".join(f"Paragraph {n} of a long plan." for n in range(400)),
          "markdown")
    assert pane.browser.verticalScrollBar().maximum() > 0  # it does scroll
    assert pane.browser.viewport().width() == width
    assert pane.browser.document().textWidth() == width


_CELL = st.tuples(st.sampled_from([1, 1, 2, 3, 8]), st.sampled_from([1, 1, 2, 4, 8]))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_CELL, max_size=7), min_size=1, max_size=9))
def test_the_sanitizer_never_counts_fewer_cells_than_qt_makes(rows):
    """The grid bound is an upper bound of Qt's own table for any mix of spans."""
    html = _table(["".join(f"<td colspan={c} rowspan={r}>x</td>" for c, r in row)
                   for row in rows])
    parser = HtmlRebuilder()
    parser.feed(normalize_html(html))
    rebuilt = parser.result()
    document = QTextDocument()
    document.setHtml(rebuilt)
    made = sum(t.rows() * t.columns() for t in document.rootFrame().childFrames()
               if isinstance(t, QTextTable))
    assert made <= parser.grid_done <= MAX_TABLE_GRID
