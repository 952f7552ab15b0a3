"""Hidden and control characters become visible markers; \\n and \\t stay."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from qoder_desktop.text.visible import (
    describe_hidden,
    find_hidden,
    has_hidden,
    hidden_chars,
    hidden_in_value,
    is_hidden,
    json_escape_hidden,
    make_visible,
    make_visible_with_map,
)


def test_plain_text_is_unchanged():
    text = "ls -la\n\tcd ~/proj && echo 'héllo wörld ✓'"
    assert make_visible(text) == text
    assert not has_hidden(text)


def test_named_controls():
    assert make_visible("a\x1b[31mred\rb\x00") == "a⟨ESC⟩[31mred⟨CR⟩b⟨NUL⟩"
    assert make_visible("\x7f\x07") == "⟨DEL⟩⟨BEL⟩"


def test_bidi_and_zero_width_are_named():
    text = "ok\u202eevil\u2066x\u2069\u200b\u200c\u200d\u2060\ufeff"
    shown = make_visible(text)
    assert "⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩" in shown
    assert "⟨U+2066 LEFT-TO-RIGHT ISOLATE⟩" in shown
    assert "⟨U+2069 POP DIRECTIONAL ISOLATE⟩" in shown
    for code in ("200B", "200C", "200D", "2060", "FEFF"):
        assert f"⟨U+{code} " in shown
    assert not has_hidden(shown)


def test_every_bidi_override_is_hidden():
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        assert has_hidden(chr(code)), hex(code)


def test_c1_controls_and_separators():
    assert make_visible("\x85") == "⟨U+0085⟩"
    assert make_visible("\u2028") == "⟨U+2028 LINE SEPARATOR⟩"


def test_find_and_describe():
    text = "\x1bx\x1b\u202e"
    assert [h.index for h in find_hidden(text)] == [0, 2, 3]
    assert describe_hidden(text) == ["ESC ×2", "U+202E RIGHT-TO-LEFT OVERRIDE"]


def test_offset_map_tracks_spans():
    text = "a\x1bbc"
    shown, offsets = make_visible_with_map(text)
    assert shown == "a⟨ESC⟩bc"
    assert shown[offsets[2]:offsets[4]] == "bc"
    assert offsets[-1] == len(shown)


def test_json_escape_round_trips():
    value = {"cmd": "echo \u202eabc\u200b \U000e0041", "k\u2066": 1}
    text = json_escape_hidden(json.dumps(value, ensure_ascii=False))
    assert "\\u202e" in text and "\\udb40\\udc41" in text
    assert not has_hidden(text)
    assert json.loads(text) == value


def test_hidden_in_nested_value():
    assert hidden_in_value({"a": ["x", {"b\u202e": "\r"}]}) != []
    assert hidden_in_value({"a": ["x", 1, None]}) == []


@given(st.text())
def test_visible_never_hides(text):
    shown = make_visible(text)
    assert not has_hidden(shown)
    assert shown.count("\n") == text.count("\n")


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_an_ascii_text_finds_exactly_its_control_characters(text):
    # (the ASCII fast path: one bytes pass instead of a set of the whole text)
    assert hidden_chars(text) == sorted({c for c in text if is_hidden(c)})


@given(st.text())
def test_any_text_finds_exactly_its_hidden_characters(text):
    assert hidden_chars(text) == sorted({c for c in text if is_hidden(c)})


def test_a_control_character_at_the_end_of_four_mebibytes_is_flagged():
    text = "a" * (4 * 1024 * 1024) + "\x1b"
    assert hidden_chars(text) == ["\x1b"]
    assert describe_hidden(text) == ["ESC"]
    assert make_visible(text).endswith("a⟨ESC⟩")
    assert json_escape_hidden(json.dumps(text, ensure_ascii=False)).endswith('a\\u001b"')
