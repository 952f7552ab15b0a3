"""Model-supplied previews are bounded before Qt sees them."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qoder_desktop.preview_html import normalize_html
from qoder_desktop.preview_sanitize import (
    MAX_DEPTH,
    MAX_PREVIEW_CHARS,
    MAX_TABLE_ROWS,
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
    assert 'colspan="20"' in sanitize_preview('<table><tr><td colspan="99999">x').text


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
