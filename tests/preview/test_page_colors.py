"""A "card" preview's colours become the page's; nothing else moves, nothing loads."""

from __future__ import annotations

import pytest

from qoder_desktop.preview.sanitize import sanitize_preview

DARK_CARD = ('<div style="border:1px solid #333;padding:8px;background:#222;color:#eee">'
             '<b>Settings</b><p>Theme: <i>dark</i></p>'
             '<table><tr><td>Font</td><td>Mono 11</td></tr></table></div>')


def test_a_dark_card_gives_its_colours_to_the_page():
    preview = sanitize_preview(DARK_CARD, "html")
    assert preview.text.startswith('<body style="background-color: #222; color: #eee">')
    assert '<div style="border:1px solid #333; padding:8px">' in preview.text
    assert "<td>Mono 11</td>" in preview.text and preview.reason == ""


@pytest.mark.parametrize("style, page", [
    ("background-color: rgb(34, 34, 34)", "background-color: rgb(34, 34, 34)"),
    ("color: navy", "color: navy"),
])
def test_plain_colour_values_move(style, page):
    preview = sanitize_preview(f'<blockquote style="{style}">x</blockquote>', "html")
    assert preview.text == f'<body style="{page}"><blockquote>x</blockquote></body>'


@pytest.mark.parametrize("html", [
    '<div style="background: url(https://evil.test/a.png); color: #eee">x</div>',
    '<div style="background: #222 url(file:///etc/passwd)">x</div>',
])
def test_a_style_that_loads_is_still_dropped_whole(html):
    preview = sanitize_preview(html, "html")
    assert preview.text == "<div>x</div>"
    assert preview.reason == "Not shown: styles that load files."


def test_a_value_that_is_not_a_plain_colour_never_reaches_the_page():
    preview = sanitize_preview('<div style="color: var(--x); background: #222">x</div>', "html")
    assert preview.text == ('<body style="background-color: #222">'
                            '<div style="color: var(--x)">x</div></body>')


@pytest.mark.parametrize("html", [
    '<div style="background:#222">a</div><p>b</p>',  # two top-level blocks
    'text <div style="background:#222">a</div>',     # text beside the block
    '<table style="background:#222"><tr><td>a</td></tr></table>',  # tables paint fine
    '<b style="background:#222">a</b>',              # an inline highlight stays inline
])
def test_only_a_single_card_block_moves_its_colours(html):
    assert "<body" not in sanitize_preview(html, "html").text
