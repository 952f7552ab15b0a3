"""Model-supplied previews are bounded before Qt sees them."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qoder_desktop.preview.html import (
    MAX_SPAN,
    MAX_SPAN_AREA,
    HtmlRebuilder,
    HtmlRefused,
    html_to_text,
    normalize_html,
)
from qoder_desktop.preview.sanitize import (
    LONG_RUN,
    MAX_DEPTH,
    MAX_PREVIEW_CHARS,
    MAX_TABLE_ROWS,
    WRAP_EVERY,
    ZERO_WIDTH_SPACE,
    break_positions,
    sanitize_preview,
    sniff_kind,
)


def test_sniffing():
    assert sniff_kind("  \n<p>x</p>") == "html"
    assert sniff_kind("# Title\n<b>") == "markdown"


@pytest.mark.parametrize("payload", [
    '<img src="/etc/passwd">', '<img src="file:///etc/passwd">',
    '<img src="http://127.0.0.1:1/x">',
    '<img src="data:image/svg+xml;base64,PHN2Zy8+">',
    '<link rel="stylesheet" href="file:///etc/passwd">',
    '<style>p { background: url(/etc/passwd) }</style>',
    '<p style="background-image:url(file:///etc/passwd)">x</p>',
    '<table background="/etc/passwd"><tr><td>x</td></tr></table>',
    '<iframe src="/etc/passwd"></iframe>', '<object data="/etc/passwd"></object>',
    '<svg><image href="/etc/passwd"/></svg>', '<script>alert(1)</script>',
    '<input type="image" src="/etc/passwd">', '<p style="x:\\75rl(/etc/passwd)">y</p>',
])
def test_html_resources_are_removed(payload):
    result = sanitize_preview("<p>before</p>" + payload + "<p>after</p>")
    lowered = result.text.lower()
    for needle in ("<img", "src=", "url(", "<link", "<style", "<script", "<iframe", "<svg",
                   "<object", "background=", "passwd", "data:"):
        assert needle not in lowered, (needle, result.text)
    assert "before" in result.text and "after" in result.text


def test_allowed_html_survives():
    result = sanitize_preview('<h2>Plan</h2><p style="color: red">A <b>bold</b> '
                              '<a href="https://x.org">link</a></p><ul><li>1<li>2</ul>')
    assert result.kind == "html" and not result.simplified
    assert '<p style="color: red">' in result.text and "<b>bold</b>" in result.text
    assert '<a href="https://x.org">' in result.text
    assert result.text.count("<li>") == 2 and result.text.count("</li>") == 2


def test_nested_tables_fall_back_to_plain_text():
    html = "<table><tr><td>" * 30 + "deep" + "</td></tr></table>" * 30
    result = sanitize_preview(html)
    assert result.kind == "plain" and result.simplified and "nests tables" in result.reason
    assert "deep" in result.text and "<" not in result.text


def test_depth_cap():
    result = sanitize_preview("<div>" * (MAX_DEPTH + 1) + "x")
    assert result.simplified and "deep" in result.reason
    assert not sanitize_preview("<div>" * MAX_DEPTH + "x").simplified


def test_row_cap():
    rows = "<tr><td>x</td></tr>" * (MAX_TABLE_ROWS + 1)
    assert sanitize_preview(f"<table>{rows}</table>").simplified


def test_colspan_is_capped():
    assert 'colspan="8"' in sanitize_preview('<table><tr><td colspan="99999">x').text
    assert 'rowspan="8"' in sanitize_preview('<table><tr><td rowspan="20%">x').text


def test_a_table_of_huge_spans_keeps_its_text_and_a_bounded_span_grid():
    """1,000 cells of colspan=rowspan=20 took Qt 18.7 s to lay out."""
    cells = "".join(f"<td colspan=20 rowspan=20>c{n}</td>" for n in range(50))
    result = sanitize_preview("<table>" + f"<tr>{cells}</tr>" * 20 + "</table>")
    assert result.kind == "html" and not result.simplified
    spans = [(int(c or 1), int(r or 1)) for c, r in re.findall(
        r'<td(?: colspan="(\d+)")?(?: rowspan="(\d+)")?>', result.text)]
    assert len(spans) == 1000
    assert max(max(pair) for pair in spans) <= MAX_SPAN
    assert sum(c * r for c, r in spans) <= MAX_SPAN_AREA + 1000
    assert all(f"c{n}" in result.text for n in range(50))


def test_a_repeated_attribute_counts_once():
    text = sanitize_preview('<table><tr><td colspan=1 colspan=8 rowspan=2>x').text
    assert text.count("colspan") == 1 and 'colspan="1"' in text


def test_size_cap():
    result = sanitize_preview("<p>" + "x" * (MAX_PREVIEW_CHARS + 10) + "</p>")
    assert result.simplified and len(result.text) <= MAX_PREVIEW_CHARS
    result = sanitize_preview("y" * (MAX_PREVIEW_CHARS * 2), "markdown")
    assert result.kind == "plain" and len(result.text) <= MAX_PREVIEW_CHARS


@pytest.mark.parametrize(("markdown", "expected"), [
    ("![logo](/etc/passwd) hi", "\\[image: logo\\] hi"),
    ("![x](file:///etc/passwd)", "\\[image: x\\]"),
    ("![x](<data:image/svg+xml;base64,AA>)", "\\[image: x\\]"),
    ("![r][ref]\n\n[ref]: /etc/passwd", "\\[image: r\\]\n\n[ref]: /etc/passwd"),
    ("!![x](y)", "!\\[image: x\\]"),
    ("\\![not an image](y)", "\\![not an image](y)"),
])
def test_markdown_images_become_text(markdown, expected):
    result = sanitize_preview(markdown, "markdown")
    assert result.kind == "markdown" and result.text == expected


@pytest.mark.parametrize("unit", ["![", "![x](", "![x][", "[", "!["])
def test_unclosed_image_brackets_are_linear_and_keep_every_character(unit):
    """`![` × 16,000 took the sanitizer 23–28 s: each unclosed one rescanned to the end."""
    text = unit * 12_000 + "tail"
    result = sanitize_preview(text, "markdown")
    assert result.text.endswith("tail")
    assert result.text.count("[") >= 12_000


def test_an_unclosed_image_never_hides_the_steps_after_it():
    plan = "Step 1: look around ![x](\n\nStep 2: rm -rf ~\n"
    result = sanitize_preview(plan, "markdown")
    assert "Step 2: rm -rf ~" in result.text
    assert result.reason == "Not shown: images."
    plan = "Step 1 ![x][\nStep 2: rm -rf ~ ![y](a.png) done"
    result = sanitize_preview(plan, "markdown")
    assert "Step 2: rm -rf ~" in result.text and result.text.endswith(" done")


def test_markdown_raw_html_is_escaped_outside_code():
    result = sanitize_preview("<img src=x> and `<b>`\n```\n<div>\n```\n", "markdown")
    assert result.text == "\\<img src=x> and `<b>`\n```\n<div>\n```\n"


def test_markdown_big_table_falls_back():
    table = "|a|b|\n|-|-|\n" + "|x|y|\n" * (MAX_TABLE_ROWS + 5)
    assert sanitize_preview(table, "markdown").simplified


_COMPLETE = re.compile(r"<(?:/?[A-Za-z][^<>]*|!--.*?--)>|&lt;", re.S)


@pytest.mark.parametrize("text", ["<a b='" * 9000, "<!--" * 16000, "<" * 60000,
                                  "<a" * 30000, "<p>" * 20000, "<a b=\"x" * 9000])
def test_html_parser_only_sees_complete_tags(text):
    """html.parser is quadratic on unterminated constructs; none may reach it."""
    normalized = normalize_html(text)
    leftover = _COMPLETE.sub("", normalized)
    assert "<" not in leftover
    sanitize_preview(text)  # and the whole pipeline copes


_PIECES = [*"<>/=\"' abcdiptrl!-&;#:()\\\n", "<table>", "<tr>", "<td>", "</table>", "<img ",
           "src=", "url(", "<div>", "<script>", "![", "](", "<!--", "-->", "style="]
_HTMLISH = st.lists(st.sampled_from(_PIECES), max_size=200).map("".join)


@settings(max_examples=300, deadline=None)
@given(_HTMLISH, st.sampled_from([None, "html", "markdown", "plain"]))
def test_fuzz_never_raises_and_stays_within_caps(text, kind):
    result = sanitize_preview(text, kind)
    assert result.kind in ("markdown", "html", "plain")
    assert len(result.text) <= MAX_PREVIEW_CHARS
    if result.kind == "html":
        checker = _Checker()
        checker.feed(result.text)
        checker.close()
        assert checker.problems == []


class _Checker(HTMLParser):
    """Re-parses sanitized output: no forbidden tags or attributes, no nested tables."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.tables = 0
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("img", "link", "style", "script", "iframe", "svg", "object"):
            self.problems.append(tag)
        for name, value in attrs:
            if name in ("src", "background") or (name == "style" and "url" in (value or "")):
                self.problems.append(name)
        if tag == "table":
            self.tables += 1
            if self.tables > 1:
                self.problems.append("nested table")
        if tag not in ("br", "hr"):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                self.problems.append("too deep")

    def handle_endtag(self, tag):
        self.tables -= tag == "table"
        self.depth -= tag not in ("br", "hr")


class _CountingRebuilder(HtmlRebuilder):
    def __init__(self) -> None:
        super().__init__()
        self.starts = 0

    def handle_starttag(self, tag, attrs):
        self.starts += 1
        super().handle_starttag(tag, attrs)


@pytest.mark.parametrize(("html", "tags_seen", "reason"), [
    ("<div>" * 10_000 + "deep" + "</div>" * 10_000, MAX_DEPTH + 1, "deep"),
    ("<table><tr><td>" * 200 + "x" + "</td></tr></table>" * 200, 4, "nests tables"),
    # <table>, then <tr><td> for each allowed row, then the row over the limit
    ("<table>" + "<tr><td>x</td></tr>" * 5000 + "</table>", 1 + 2 * MAX_TABLE_ROWS + 1, "rows"),
])
def test_rebuilder_stops_at_the_first_failure(html, tags_seen, reason):
    parser = _CountingRebuilder()
    with pytest.raises(HtmlRefused):
        parser.feed(normalize_html(html))
    assert reason in parser.error
    assert parser.starts == tags_seen  # nothing after the failing tag was parsed


def test_refused_html_falls_back_to_its_text():
    result = sanitize_preview("<div>" * 5_000 + "deep &amp; down" + "</div>" * 5_000)
    assert len("<div>" * 5_000) < MAX_PREVIEW_CHARS
    assert result.kind == "plain" and result.simplified and "deep" in result.reason
    assert result.text == "deep & down"


@pytest.mark.parametrize(("html", "text"), [
    ("<p>a</p><p>b <b>c</b></p>", "a\n\nb c"),
    ("<h2 title='x>y'>T</h2>x<br/>y", "T\nx\ny"),
    ("a<script>var s = '<p>';</script>b<STYLE media=x>p {}</STYLE>c", "abc"),
    ("a<svg><text>drawn</text></svg>b<iframe>f</iframe>c", "abc"),
    ("a<script>never closed <p>x</p>", "a"),
    ("1 &lt; 2 &amp;&amp; <i>3</i> &gt; 2", "1 < 2 && 3 > 2"),
    ("<p>a</p>\n\n\n\n<p>b</p>", "a\n\nb"),
])
def test_html_to_text(html, text):
    assert html_to_text(normalize_html(html)) == text


def test_oversize_and_refused_html_fall_back_without_hidden_content():
    big = "<p>intro</p><script>alert('hidden')</script><style>p{}</style>" + "<p>x</p>" * 20_000
    for html in (big, "<script>alert('hidden')</script>" + "<div>" * 100 + "deep"):
        result = sanitize_preview(html)
        assert result.kind == "plain" and result.simplified
        assert "hidden" not in result.text and "<p>" not in result.text
        assert result.text.startswith(("intro\n\nx\n\nx", "deep"))
        assert len(result.text) <= MAX_PREVIEW_CHARS


def test_many_unclosed_dropped_elements_are_one_search_each():
    assert html_to_text(normalize_html("<script>" * 20_000 + "x")) == ""
    assert html_to_text(normalize_html("<p>keep</p>" + "<svg>" * 20_000)) == "keep"


def _insert_breaks(text: str) -> str:
    for position in reversed(break_positions(text)):
        text = text[:position] + ZERO_WIDTH_SPACE + text[position:]
    return text


def _longest_run(text: str) -> int:
    return max((len(run) for run in re.split(r"[ \t\n\r\u2028\u2029\u200b\ufdd0\ufdd1]",
                                             text)), default=0)


def test_short_runs_are_left_alone():
    url = "https://example.com/" + "a1/" * 150
    assert len(url) <= LONG_RUN
    for text in ("x" * LONG_RUN, url, ("word " * 20_000), ("x" * 400 + "\u2029") * 100,
                 ("x" * 400 + "\ufdd0") * 100, "x" * 400 + ZERO_WIDTH_SPACE + "x" * 400):
        assert break_positions(text) == []


def test_a_60k_word_gets_a_break_every_wrap_every_characters():
    word = "x" * 60_000
    positions = break_positions(word)
    assert positions == list(range(WRAP_EVERY, 60_000, WRAP_EVERY))
    broken = _insert_breaks(word)
    assert broken.replace(ZERO_WIDTH_SPACE, "") == word
    assert _longest_run(broken) == WRAP_EVERY


def test_no_break_spaces_do_not_end_a_run():
    assert break_positions("\xa0" * (LONG_RUN + 1))
    assert break_positions("a\u2007" * LONG_RUN)


@pytest.mark.parametrize("unit", ["e\u0301", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
                                  "\u0915\u094d\u0937", "x\ufe0f"])
def test_breaks_never_split_a_character_from_its_marks_or_joiners(unit):
    text = unit * 2000
    positions = break_positions(text)
    assert positions
    for position in positions:
        before, after = text[position - 1], text[position]
        assert after not in "\u0301\u094d\ufe0f\u200d" and before != "\u200d", position


_RUN_PIECES = ["x", "xxxxxxxxxx", "漢", " ", "\n", "\u2029", "\xa0", "\u0301", "\u200d",
               "\U0001F600", "-", "."]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_RUN_PIECES), st.integers(1, 400)), max_size=12))
def test_fuzz_breaks_bound_every_run(parts):
    text = "".join(piece * count for piece, count in parts)
    positions = break_positions(text)
    assert positions == sorted(set(positions))
    assert all(0 < position < len(text) for position in positions)
    broken = _insert_breaks(text)
    assert broken.replace(ZERO_WIDTH_SPACE, "") == text.replace(ZERO_WIDTH_SPACE, "")
    assert _longest_run(broken) <= LONG_RUN
