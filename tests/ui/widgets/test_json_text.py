"""The JSON editor's text: it parses only objects, says where a mistake is, and picks a
wrap mode Qt can lay out quickly."""

from __future__ import annotations

import json

import pytest
from PySide6.QtGui import QTextOption

from qoder_desktop.ui.widgets.json_text import LARGE_TEXT, parse_object, string_size, wrap_mode_for


def test_an_object_parses() -> None:
    assert parse_object('{"command": "ls", "timeout": 5}') == ({"command": "ls", "timeout": 5}, "")


@pytest.mark.parametrize(("text", "error"), [
    ('{"command": "ls",\n  "timeout": }',
     "Invalid JSON at line 2, column 14: Expecting value."),
    ("", "Invalid JSON at line 1, column 1: Expecting value."),
    ('["ls"]', "Invalid input at line 1, column 1: the input must be a JSON object."),
    ("42", "Invalid input at line 1, column 1: the input must be a JSON object."),
    ("[" * 100_000 + "]" * 100_000, "Invalid JSON: nested too deeply."),
])
def test_a_mistake_is_named_with_its_place(text: str, error: str) -> None:
    assert parse_object(text) == (None, error)


def test_string_size_is_a_lower_bound_of_the_json_length() -> None:
    value = {"command": "npm test", "args": ["-x", {"deep": "y" * 50}], "n": 3, "ok": True}
    assert string_size(value) == len("command" "npm test" "args" "-x" "deep" "n" "ok") + 50
    assert string_size(value) <= len(json.dumps(value))
    assert string_size(42) == 0


@pytest.mark.parametrize(("text", "mode"), [
    ("a short line with words", QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere),
    ("x" * 500 + " y", QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere),
    ("a " + "x" * 501, QTextOption.WrapMode.WrapAnywhere),
    ("word " * (LARGE_TEXT // 5 + 1), QTextOption.WrapMode.WrapAnywhere),
])
def test_a_long_run_without_spaces_wraps_anywhere(text: str, mode: QTextOption.WrapMode) -> None:
    assert wrap_mode_for(text) == mode
