"""The HTML half of `preview_sanitize`: rebuild model HTML from an allow-list.

`normalize_html` (`html_text`) first keeps only complete tags and escapes every other `<`
in one linear pass (`html.parser` is quadratic on unterminated tags, quotes and
comments). Then `HtmlRebuilder` (an `html.parser.HTMLParser`) re-emits allowed tags
with allowed, bounded attributes, drops resource-loading tags and attributes, closes
implied end tags, and stops at the first limit it hits (depth, nested tables, rows,
cells, the table grid) by raising `HtmlRefused`: the rest would be thrown away, and
`html.parser` costs ~4 µs a tag. `html_text.html_to_text` is the cheap plain-text view
(regular expressions only) used for every fallback. Tables are bounded by the grid Qt
lays out (`MAX_TABLE_GRID`), not only by their cells. Qt-free.

Page colours: Qt paints a `<div>`'s background behind each of its lines, not behind the
box (dark bars with white gaps, and light text left on white in table cells). When the
whole preview is one block element with a background or text colour (a "card"), those
colours move to the page (`<body style=…>`, which Qt paints behind everything and every
cell inherits); only plain colour values move, never anything that could load.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from qoder_desktop.preview.html_text import DROPPED_WITH_CONTENT, html_to_text, normalize_html

__all__ = ["ALLOWED_TAGS", "DROPPED_WITH_CONTENT", "MAX_DEPTH", "MAX_SPAN", "MAX_SPAN_AREA",
           "MAX_TABLE_CELLS", "MAX_TABLE_DEPTH", "MAX_TABLE_GRID", "MAX_TABLE_ROWS",
           "HtmlRebuilder", "HtmlRefused", "html_to_text", "normalize_html", "removed_note"]

MAX_DEPTH = 16
MAX_TABLE_DEPTH = 1
MAX_TABLE_ROWS = 100
MAX_TABLE_CELLS = 1000
MAX_SPAN = 8
"""`colspan`/`rowspan` above this are clamped (Qt lays out a table by its span grid)."""
MAX_SPAN_AREA = 4 * MAX_TABLE_CELLS
"""The grid area (sum of colspan × rowspan) all cells together may cover; cells past it
get no span. Qt's table layout grows with that grid: 1,000 cells spanning 20×20 took
18.7 s, 8×8 0.3–0.4 s."""
MAX_TABLE_GRID = 2 * MAX_TABLE_CELLS
"""The positions (rows × columns) all tables of a preview may lay out together. Qt makes
every position of a table's grid a cell (rows shorter than the widest are padded), and
lays each out: ~40 µs a cell with text, ~25 µs an empty one, on this project's machine.
A table whose spans grow the grid past this loses all its spans (the banner says so);
one that outgrows it without spans (one row of 500 cells over 99 rows of 5 is 50,000
positions, ~1.3 s) is refused. Within it a table lays out in about 60 ms."""

ALLOWED_TAGS = frozenset({
    "p", "br", "hr", "b", "strong", "i", "em", "u", "s", "strike", "del", "ins", "code", "pre",
    "kbd", "samp", "tt", "var", "cite", "dfn", "sub", "sup", "small", "big", "span", "div",
    "blockquote", "center", "address", "font", "nobr", "h1", "h2", "h3", "h4", "h5", "h6",
    "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "th", "td",
    "caption", "a",
})
VOID_TAGS = frozenset({"br", "hr"})
_ATTRIBUTES = {"align", "valign", "colspan", "rowspan", "width", "height", "border",
               "cellpadding", "cellspacing", "color", "bgcolor", "face", "size", "style",
               "href", "start", "type"}
_NUMERIC = {"colspan", "rowspan", "width", "height", "border", "cellpadding", "cellspacing",
            "start", "size"}
_BAD_STYLE = re.compile(r"url|expression|import|image|behavior|binding|src|\\|/\*|&|@",
                        re.IGNORECASE)
_COLOR_VALUE = re.compile(r"\s*(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|rgba?\(\s*[0-9.%\s,]{1,40}\))"
                          r"\s*")
"""A colour value that may move to the page: hex, a name, or rgb()/rgba() of numbers."""
_PAGE_COLORS = {"background": "background-color", "background-color": "background-color",
                "color": "color"}
_CARD_TAGS = frozenset({"div", "blockquote", "center", "address", "p"})
"""Block elements whose colours become the page's when one of them is the whole preview."""
_IMPLIED_CLOSE = {"p": {"p"}, "li": {"li"}, "dt": {"dt", "dd"}, "dd": {"dt", "dd"},
                  "tr": {"tr", "td", "th"}, "td": {"td", "th"}, "th": {"td", "th"}}
_SCOPES = {"li": {"ul", "ol"}, "dt": {"dl"}, "dd": {"dl"}, "tr": {"table"},
           "td": {"tr", "table"}, "th": {"tr", "table"}, "p": {"div", "td", "th", "li",
                                                              "blockquote"}}


class _TableGrid:
    """An upper bound of the grid Qt makes of one table (`QTextHtmlImporter::scanTable`).

    Qt places a cell at the first column of its row that no rowspan from above covers
    (skipping a covering cell's whole colspan, even from inside it); the table is as wide
    as its widest row, and Qt makes every position of it a cell. A row is at most as
    wide as its own cells' colspans plus those of every cell that covers it from above.
    """

    def __init__(self) -> None:
        self.rows = 0
        self.columns = 0
        self._width = 0
        """The current row's bound so far."""
        self._covering = 0
        """Colspans of the cells from rows above that cover the current row."""
        self._changes: dict[int, int] = {}
        """Row → change of `_covering` when that row starts."""

    @property
    def positions(self) -> int:
        """Rows × columns: the cells Qt lays out for this table (at most)."""
        return self.rows * self.columns

    def start_row(self) -> None:
        """The next cells go into a new row."""
        self._covering += self._changes.pop(self.rows, 0)
        self.rows += 1
        self._width = self._covering
        self.columns = max(self.columns, self._width)

    def place(self, colspan: int, rowspan: int) -> None:
        """Put a cell of these spans in the current row."""
        self._width += colspan
        self.columns = max(self.columns, self._width)
        if rowspan > 1:  # covers the next rowspan - 1 rows (row indices from 0)
            row = self.rows - 1
            self._changes[row + 1] = self._changes.get(row + 1, 0) + colspan
            self._changes[row + rowspan] = self._changes.get(row + rowspan, 0) - colspan


class HtmlRefused(ValueError):
    """The HTML hit a limit; `HtmlRebuilder.error` says which. Parsing stopped there."""


class HtmlRebuilder(HTMLParser):
    """Re-emit only allowed tags/attributes, tracking depth and table limits.

    `feed` raises `HtmlRefused` at the first limit hit (after setting `error`); the
    parser is then spent.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.stack: list[str] = []
        self.skip_depth = 0
        self.skip_tag = ""
        self.tables = 0
        self.rows = 0
        self.cells = 0
        self.span_area = 0
        self.grid_done = 0
        """Positions of the closed tables, as they are emitted."""
        self.grid = _TableGrid()
        """The open table as written, spans included."""
        self.bare_grid = _TableGrid()
        """The open table with every span dropped: the least it can cost."""
        self.row_open = False
        self.spanned: list[tuple[int, str, list[tuple[str, str]]]] = []
        """The open table's cells with spans: index in `out`, tag, attributes."""
        self.removed: set[str] = set()
        self.error = ""
        self.top_level: list[tuple[str, int, list[tuple[str, str]]]] = []
        """Each top-level element: its tag, its index in `out` and its attributes."""
        self.top_level_text = False

    def _fail(self, message: str) -> None:
        self.error = message
        raise HtmlRefused(message)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip_depth:
            self.skip_depth += tag == self.skip_tag
            return
        if tag in DROPPED_WITH_CONTENT:
            self.removed.add(tag)
            self.skip_depth, self.skip_tag = 1, tag
            return
        if tag not in ALLOWED_TAGS:
            if tag in ("img", "link", "input", "image", "base", "meta"):
                self.removed.add("img" if tag in ("img", "image", "input") else tag)
            return
        self._implied_close(tag)
        if tag == "table":
            if self.tables >= MAX_TABLE_DEPTH:
                self._fail("it nests tables")
            self.tables += 1
        elif tag == "tr":
            self.rows += 1
            if self.rows > MAX_TABLE_ROWS:
                self._fail(f"a table has more than {MAX_TABLE_ROWS} rows")
            if self.tables:
                self._start_row()
        elif tag in ("td", "th"):
            self.cells += 1
            if self.cells > MAX_TABLE_CELLS:
                self._fail(f"its tables have more than {MAX_TABLE_CELLS} cells")
        attributes = self._attributes(attrs)
        if tag in ("td", "th"):
            attributes = self._placed(tag, self._bounded_spans(attributes))
        if not self.stack:
            self.top_level.append((tag, len(self.out), attributes))
        self.out.append(f"<{tag}{_shown(attributes)}>")
        if tag not in VOID_TAGS:
            self.stack.append(tag)
            if len(self.stack) > MAX_DEPTH:
                self._fail(f"it nests elements more than {MAX_DEPTH} deep")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        closes_itself = tag not in VOID_TAGS and not self.skip_depth
        if closes_itself or (self.skip_depth and tag == self.skip_tag):
            self.handle_endtag(tag)

    def _implied_close(self, tag: str) -> None:
        closes = _IMPLIED_CLOSE.get(tag)
        if not closes:
            return
        scopes = _SCOPES.get(tag, set())
        for index in range(len(self.stack) - 1, -1, -1):
            open_tag = self.stack[index]
            if open_tag in scopes:
                return
            if open_tag in closes:
                self._close_to(index)
                return

    def _close_to(self, index: int) -> None:
        while len(self.stack) > index:
            tag = self.stack.pop()
            self.tables -= tag == "table"
            if tag == "table":
                self._close_table()
            elif tag == "tr":
                self.row_open = False
            self.out.append(f"</{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if self.skip_depth:
            if tag == self.skip_tag:
                self.skip_depth -= 1
            return
        if tag in self.stack:
            self._close_to(len(self.stack) - 1 - self.stack[::-1].index(tag))

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if not self.stack and data.strip():
            self.top_level_text = True
        self.out.append(html.escape(data, quote=False))

    def _attributes(self, attrs: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
        parts: list[tuple[str, str]] = []
        seen: set[str] = set()
        for name, value in attrs:
            if name in seen:  # one value per attribute: the first, as browsers take it
                continue
            seen.add(name)
            if name in ("src", "background", "srcset") or name.startswith("on"):
                self.removed.add("script" if name.startswith("on") else "img")
                continue
            if name not in _ATTRIBUTES or value is None:
                continue
            if name in _NUMERIC:
                match = re.fullmatch(r"\s*(\d{1,6})\s*(%?)\s*", value)
                if not match:
                    continue
                if name in ("colspan", "rowspan"):
                    value = str(min(max(int(match[1]), 1), MAX_SPAN))
                else:
                    value = f"{min(int(match[1]), 2000)}{match[2]}"
            elif name == "style" and _BAD_STYLE.search(value):
                self.removed.add("style")
                continue
            parts.append((name, value))
        return parts

    def _bounded_spans(self, attributes: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Drop a cell's spans once the document's span budget (`MAX_SPAN_AREA`) is spent."""
        spans = {name: int(value) for name, value in attributes
                 if name in ("colspan", "rowspan")}
        area = max(1, spans.get("colspan", 1)) * max(1, spans.get("rowspan", 1))
        if self.span_area + area > MAX_SPAN_AREA:
            self.span_area += 1
            if area > 1:
                self.removed.add("span")
            return _without_spans(attributes)
        self.span_area += area
        return attributes

    def _check_grid(self) -> None:
        if self.grid_done + self.bare_grid.positions > MAX_TABLE_GRID:
            self._fail(f"its tables would lay out more than {MAX_TABLE_GRID:,} cells "
                       "(rows of very different lengths)")

    def _start_row(self) -> None:
        self.grid.start_row()
        self.bare_grid.start_row()
        self.row_open = True
        self._check_grid()

    def _placed(self, tag: str, attributes: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Place a cell in the open table's grid (with and without its spans)."""
        if not self.tables:
            return attributes  # a cell outside any table: Qt lays out no grid for it
        if not self.row_open:
            self._start_row()  # a cell straight in <table>: Qt opens a row for it
        spans = {name: int(value) for name, value in attributes
                 if name in ("colspan", "rowspan")}
        colspan, rowspan = spans.get("colspan", 1), spans.get("rowspan", 1)
        self.bare_grid.place(1, 1)
        self._check_grid()
        self.grid.place(colspan, rowspan)
        if (colspan, rowspan) != (1, 1):
            self.spanned.append((len(self.out), tag, attributes))
        return attributes

    def _close_table(self) -> None:
        """Count the table's grid; drop all its spans if they grow it past the budget."""
        if self.grid_done + self.grid.positions > MAX_TABLE_GRID:
            for index, tag, attributes in self.spanned:
                self.out[index] = f"<{tag}{_shown(_without_spans(attributes))}>"
            self.removed.add("span")
            self.grid_done += self.bare_grid.positions
        else:
            self.grid_done += self.grid.positions
        self.grid, self.bare_grid = _TableGrid(), _TableGrid()
        self.row_open = False
        self.spanned = []

    def result(self) -> str:
        self._close_to(0)
        if len(self.top_level) == 1 and not self.top_level_text:
            return self._lift_page_colors()
        return "".join(self.out)

    def _lift_page_colors(self) -> str:
        """One card element makes the whole preview: its colours become the page's."""
        tag, index, attributes = self.top_level[0]
        if tag not in _CARD_TAGS:
            return "".join(self.out)
        page: dict[str, str] = {}
        kept: list[tuple[str, str]] = []
        for name, value in attributes:
            if name == "bgcolor" and _COLOR_VALUE.fullmatch(value):
                page["background-color"] = value.strip()
            elif name == "style":
                rest = []
                for declaration in value.split(";"):
                    prop, _, prop_value = declaration.partition(":")
                    target = _PAGE_COLORS.get(prop.strip().lower())
                    if target and _COLOR_VALUE.fullmatch(prop_value):
                        page[target] = prop_value.strip()
                    elif declaration.strip():
                        rest.append(declaration.strip())
                if rest:
                    kept.append((name, "; ".join(rest)))
            else:
                kept.append((name, value))
        if not page:
            return "".join(self.out)
        out = list(self.out)
        out[index] = f"<{tag}{_shown(kept)}>"
        style = "; ".join(f"{name}: {value}" for name, value in sorted(page.items()))
        return f'<body style="{html.escape(style, quote=True)}">' + "".join(out) + "</body>"


def _without_spans(attributes: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in attributes if name not in ("colspan", "rowspan")]


def _shown(attributes: list[tuple[str, str]]) -> str:
    return "".join(f' {name}="{html.escape(value, quote=True)}"' for name, value in attributes)


def removed_note(removed: set[str]) -> str:
    """A plain sentence naming what the rebuild dropped, e.g. "Not shown: images."."""
    names = {"img": "images", "link": "linked files", "style": "styles that load files",
             "script": "scripts", "iframe": "embedded frames", "svg": "SVG drawings",
             "span": "table cells' spans (too big to lay out)"}
    if not removed:
        return ""
    items = sorted({names.get(item, "embedded content") for item in removed})
    return "Not shown: " + ", ".join(items) + "."
