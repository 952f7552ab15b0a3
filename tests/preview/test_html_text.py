"""The text level of model HTML: only complete tags survive, and refused HTML has a plain
view a person can read (no script, no style, cells and blocks kept apart)."""

from __future__ import annotations

import pytest

from qoder_desktop.preview.html_text import html_to_text, normalize_html


@pytest.mark.parametrize(("raw", "expected"), [
    ("<p>a</p>", "<p>a</p>"),
    ('<a href="x" title=\'y\'>z</a>', '<a href="x" title=\'y\'>z</a>'),
    ("<br/>", "<br/>"),
    ("1 < 2", "1 &lt; 2"),
    ("<p unterminated", "&lt;p unterminated"),
    ('<a href="never closed>x', '&lt;a href="never closed>x'),
    ("a<!-- hidden -->b", "ab"),
    ("<!DOCTYPE html><p>x</p>", "<p>x</p>"),
    ("<?xml version='1.0'?>x", "x"),
    ("a <!-- open comment", "a &lt;!-- open comment"),
    ("<<b>x</b>", "&lt;<b>x</b>"),
])
def test_only_complete_tags_survive(raw, expected):
    assert normalize_html(raw) == expected


def test_many_unterminated_tags_are_all_escaped():
    raw = "<a " * 2000 + "<!-- " * 2000
    normalized = normalize_html(raw)
    assert "<" not in normalized.replace("&lt;", "")
    assert normalized.count("&lt;") == 4000


def text_of(raw: str) -> str:
    return html_to_text(normalize_html(raw))


@pytest.mark.parametrize(("raw", "expected"), [
    ("<p>Hello</p><p>world</p>", "Hello\n\nworld"),
    ("a<br>b", "a\nb"),
    ("<b>bold</b> &amp; <i>it</i> &lt;3", "bold & it <3"),
    ("before<script>alert(1)</script>after", "beforeafter"),
    ("<STYLE>p{}</STYLE>shown", "shown"),
    ("<svg><text>drawn</text></svg>x", "x"),
    ("kept<script>never closed", "kept"),
    ("<p>one</p>\n\n\n\n<p>two</p>", "one\n\ntwo"),
])
def test_the_plain_view_reads_like_the_page(raw, expected):
    assert text_of(raw) == expected


def test_table_cells_are_kept_apart_by_one_tab():
    raw = ("<table><tr><th>name</th><th>size</th></tr>"
           "<tr><td>a.txt</td><td>3</td></tr></table>")
    rows = [line.rstrip("\t") for line in text_of(raw).splitlines() if line]
    assert [row.split("\t") for row in rows] == [["name", "size"], ["a.txt", "3"]]


def test_a_dropped_element_without_a_close_hides_the_rest_even_if_it_appears_again():
    assert text_of("x<script>a</script>y<script>b<script>c") == "xy"
