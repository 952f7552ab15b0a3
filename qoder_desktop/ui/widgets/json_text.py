"""The JSON editor's text, without Qt widgets: how large a text is, how it wraps, how it
parses (the editor, `json_editor.JsonEditor`, shows and checks it)."""

from __future__ import annotations

import json
import re
from typing import Any

from PySide6.QtGui import QTextOption

LARGE_TEXT = 64 * 1024
"""Editor texts longer than this (in characters) are validated after a pause in typing
(`LARGE_DEBOUNCE_MS`) instead of at once: parsing and diffing them takes a while."""
LARGE_DEBOUNCE_MS = 400
READ_STEP_BLOCKS = 128
"""Blocks (of at most `DISPLAY_CHUNK` characters) of a large text read per loop turn."""
_LONG_RUN = re.compile(r"(?<!\S)\S{501}")
"""A run of more than 500 non-spaces; the look-behind tries each run once (linear)."""


def wrap_mode_for(text: str) -> QTextOption.WrapMode:
    """Wrap anywhere when `text` has a run Qt's word wrap is slow on (>500 characters
    without a space: a 1 MiB word took more than 120 s to lay out), else at words."""
    if len(text) > LARGE_TEXT:  # shown in pieces of at most `DISPLAY_CHUNK` characters
        return QTextOption.WrapMode.WrapAnywhere
    return (QTextOption.WrapMode.WrapAnywhere if _LONG_RUN.search(text)
            else QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)


def string_size(value: object) -> int:
    """How many characters the strings (keys too) of a JSON-like value hold: a lower
    bound of its JSON text's length, known without writing the JSON."""
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return size


def parse_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """Parse editor text as a JSON object.

    Returns:
        (value, "") when valid, else (None, an error naming line and column).
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"Invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}."
    except RecursionError:
        return None, "Invalid JSON: nested too deeply."
    if not isinstance(value, dict):
        return None, "Invalid input at line 1, column 1: the input must be a JSON object."
    return value, ""
