"""Tables are bounded by the grid Qt lays out (rows × columns), not only by their cells.

Qt makes every position of a table's grid a cell and lays each one out: a table whose
rows differ in length, or whose spans push cells to the right, costs far more than its
cells (a 20×50 table of 8×8 spans blocked the loop 0.5 s).
"""

from __future__ import annotations

from qoder_desktop.preview.sanitize import MAX_TABLE_GRID, sanitize_preview


def _table(rows: list[str]) -> str:
    return "<table>" + "".join(f"<tr>{row}</tr>" for row in rows) + "</table>"


def test_rows_of_very_different_lengths_fall_back_to_all_their_text():
    wide = "".join(f"<td>w{n}</td>" for n in range(500))
    narrow = ["".join(f"<td>r{r}c{c}</td>" for c in range(5)) for r in range(99)]
    result = sanitize_preview(_table([wide, *narrow]))
    assert result.kind == "plain" and result.simplified
    assert f"more than {MAX_TABLE_GRID:,} cells" in result.reason
    assert "w499" in result.text and "r98c4" in result.text


def test_spans_that_would_outgrow_the_grid_are_dropped_and_the_banner_says_so():
    cells = "".join(f"<td colspan=8>h{n}</td>" for n in range(50))
    body = ["".join(f"<td>{r}.{c}</td>" for c in range(50)) for r in range(19)]
    result = sanitize_preview(_table([cells, *body]))
    assert result.kind == "html" and not result.simplified
    assert "colspan" not in result.text
    assert result.reason == "Not shown: table cells' spans (too big to lay out)."
    assert "h49" in result.text and "18.49" in result.text


def test_a_table_with_ordinary_spans_keeps_them_without_a_note():
    header = "<th colspan=3>Plan</th>"
    body = ["<td rowspan=2>a</td><td>b</td><td>c</td>", "<td>d</td><td>e</td>"]
    result = sanitize_preview(_table([header, *body]))
    assert result.kind == "html" and result.reason == ""
    assert 'colspan="3"' in result.text and 'rowspan="2"' in result.text


def test_the_grid_budget_is_for_all_tables_together():
    table = _table(["".join(f"<td>{c}</td>" for c in range(40)), *["<td>x</td>"] * 9])
    assert sanitize_preview(table * 5).kind == "html"  # 5 × 10 × 40 = 2,000 positions
    many = sanitize_preview("<p>x</p>".join([table] * 5) + "<table><tr><td>end")
    assert many.kind == "plain" and "cells" in many.reason and "end" in many.text


def test_a_markdown_table_runs_on_over_lines_without_pipes():
    """GitHub's dialect: every line up to a blank one is a row, padded to the header."""
    table = "|" + "h|" * 30 + "\n|" + "-|" * 30 + "\n" + "x\n" * 300
    result = sanitize_preview(table, "markdown")
    assert result.kind == "plain" and f"more than {MAX_TABLE_GRID:,} cells" in result.reason


def test_ordinary_markdown_tables_and_piped_code_still_render():
    table = "| a | b | c |\n|---|---|---|\n" + "| 1 | 2 | 3 |\n" * 90
    assert sanitize_preview(table, "markdown").kind == "markdown"
    code = "```\n" + "ls | wc -l\n" * 90 + "```\n"
    prose = "\n".join(f"line {n} with a | pipe" for n in range(90))
    assert sanitize_preview(code + "\n" + "text\n" * 3000, "markdown").kind == "markdown"
    assert sanitize_preview(prose, "markdown").kind == "markdown"


def test_a_refused_table_shows_its_cells_apart():
    wide = "".join(f"<td>w{n}</td>" for n in range(500))
    result = sanitize_preview(_table([wide, *["<td>a</td><td>b<td>c"] * 99]))
    lines = result.text.split("\n")
    assert lines[0].split("\t") == [f"w{n}" for n in range(500)] + [""]
    assert lines[1] == "" and lines[2].split("\t") == ["a", "b", "c"]
