"""Make hidden and control characters visible before a person approves text.

The user approves what the screen shows; the CLI runs what is sent. Control characters,
ANSI escapes, carriage returns, bidi overrides and zero-width characters can make the two
differ (the Trojan-Source class, CVE-2021-42574). Every view that shows a command, a
path or a JSON input runs it through `make_visible` first.

`\\n` and `\\t` are kept as they are; everything else that is a control (Cc), a format
character (Cf), a line/paragraph separator (Zl/Zp), a lone surrogate (Cs), a private-use
(Co) or unassigned (Cn) code point, or a space other than U+0020 (Zs: the no-break space
U+00A0, U+1680, U+2000–U+200A, U+202F, U+205F, U+3000 look like a space but are not one to
a shell) is replaced by a marker such as `⟨ESC⟩`, `⟨CR⟩` or
`⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩`. This is the one definition of a hidden character:
the shell lexer (`shell/words.py`) and every view use it.

Long texts are checked per distinct character and then searched with one regular
expression (a megabyte costs milliseconds instead of a Python call per character).

Qt-free: the core and the views both use it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic and the models load after the first paint
    from qoder_desktop.domain.models import ApprovalRequest

KEPT = frozenset("\n\t")
"""Control characters that keep their normal meaning."""

_C0_NAMES = (
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "TAB", "LF", "VT", "FF",
    "CR", "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM",
    "SUB", "ESC", "FS", "GS", "RS", "US",
)
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn", "Zs"})
_PLAIN_SPACE = " "
_REGEX_FROM = 64
"""Texts at least this long are searched with the compiled pattern."""
# Blank-looking characters that are not Cf but still hide or fake text.
_EXTRA_HIDDEN = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0xFFFC})


@dataclass(frozen=True)
class HiddenChar:
    """One hidden character found in a text.

    Attributes:
        index: its position in the original string.
        char: the character itself.
        label: the marker text without brackets, e.g. `ESC` or `U+202E RIGHT-TO-LEFT OVERRIDE`.
    """

    index: int
    char: str
    label: str


@lru_cache(maxsize=512)
def is_hidden(char: str) -> bool:
    """True when `char` must not be shown raw (see the module docstring)."""
    if char in KEPT or char == _PLAIN_SPACE:
        return False
    code = ord(char)
    return unicodedata.category(char) in _HIDDEN_CATEGORIES or code in _EXTRA_HIDDEN


@lru_cache(maxsize=512)
def char_label(char: str) -> str:
    """The marker text for one hidden character, e.g. `CR` or `U+200B ZERO WIDTH SPACE`."""
    code = ord(char)
    if code < 0x20:
        return _C0_NAMES[code]
    if code == 0x7F:
        return "DEL"
    name = unicodedata.name(char, "")
    return f"U+{code:04X} {name}" if name else f"U+{code:04X}"


def marker(char: str) -> str:
    """The visible stand-in for a hidden character, e.g. `⟨ESC⟩`."""
    return f"⟨{char_label(char)}⟩"


_ASCII_SHOWN = bytes(code for code in range(128)
                     if not is_hidden(chr(code)))
"""The ASCII characters shown as they are (printable, space, `\n`, `\t`)."""


def hidden_chars(text: str) -> list[str]:
    """The distinct hidden characters `text` holds, sorted (linear, in C).

    An ASCII text (the common large case) is checked in one `bytes.translate` pass
    that leaves only its control characters; any other text by its distinct
    characters, each classified once.
    """
    if text.isascii():
        candidates = set(text.encode("ascii").translate(None, _ASCII_SHOWN).decode("ascii"))
    else:
        candidates = set(text)
    return sorted(char for char in candidates if is_hidden(char))


def _pattern_for(text: str) -> re.Pattern[str] | None:
    """A character class of exactly the hidden characters `text` holds (None if none).

    The distinct characters of a text are few even when it is long: checking each once
    and searching with a class of just those keeps a megabyte at milliseconds.
    """
    hidden = hidden_chars(text)
    if not hidden:
        return None
    return re.compile("[" + "".join(re.escape(char) for char in hidden) + "]")


def hidden_pattern(text: str) -> re.Pattern[str] | None:
    """A compiled pattern matching every hidden character `text` holds (None if none)."""
    return _pattern_for(text)


def _hidden_spans(text: str) -> list[int]:
    if len(text) < _REGEX_FROM:
        return [i for i, c in enumerate(text) if is_hidden(c)]
    pattern = _pattern_for(text)
    return [] if pattern is None else [match.start() for match in pattern.finditer(text)]


def has_hidden(text: str) -> bool:
    """True when `text` holds at least one character that `make_visible` would replace."""
    if text.isascii():  # one C pass leaves only the hidden ASCII (controls)
        return bool(text.encode("ascii").translate(None, _ASCII_SHOWN))
    if len(text) < _REGEX_FROM:
        return any(is_hidden(char) for char in text)
    return _pattern_for(text) is not None


def find_hidden(text: str) -> list[HiddenChar]:
    """Every hidden character of `text`, in order."""
    return [HiddenChar(i, text[i], char_label(text[i])) for i in _hidden_spans(text)]


def make_visible(text: str) -> str:
    """Replace every hidden character of `text` by its marker; keep `\\n` and `\\t`."""
    if len(text) < _REGEX_FROM:
        if not any(is_hidden(char) for char in text):
            return text
        return "".join(marker(c) if is_hidden(c) else c for c in text)
    pattern = _pattern_for(text)  # (one scan of a long text)
    return text if pattern is None else pattern.sub(lambda match: marker(match[0]), text)


def make_visible_with_map(text: str) -> tuple[str, list[int]]:
    """Like `make_visible`, plus where each original offset landed.

    Returns:
        The visible text and a list of `len(text) + 1` offsets: entry `i` is the offset in
        the visible text of original character `i` (the last entry is the visible length),
        so a span `(start, end)` of the original maps to `(map[start], map[end])`.
    """
    parts: list[str] = []
    offsets: list[int] = []
    done = shift = 0
    for index in _hidden_spans(text):
        offsets.extend(range(done + shift, index + shift))
        parts.append(text[done:index])
        piece = marker(text[index])
        offsets.append(index + shift)
        parts.append(piece)
        shift += len(piece) - 1
        done = index + 1
    offsets.extend(range(done + shift, len(text) + shift + 1))
    parts.append(text[done:])
    return "".join(parts), offsets


def describe_hidden(text: str) -> list[str]:
    """The distinct hidden characters of `text` as readable names with counts.

    Example: `["U+202E RIGHT-TO-LEFT OVERRIDE", "ESC ×2"]`, in order of first appearance.
    """
    if len(text) < _REGEX_FROM:
        counts = Counter(char_label(c) for c in text if is_hidden(c))
        return [label if count == 1 else f"{label} ×{count}"
                for label, count in counts.items()]
    # Linear in C: each distinct hidden character is counted and located with str methods.
    hidden = sorted(hidden_chars(text), key=text.index)
    named = ((char_label(char), text.count(char)) for char in hidden)
    return [label if count == 1 else f"{label} ×{count}" for label, count in named]


def json_escape_hidden(json_text: str) -> str:
    """Rewrite hidden characters in JSON text as `\\uXXXX` escapes.

    JSON produced by `json.dumps(..., ensure_ascii=False)` keeps bidi and zero-width
    characters raw inside strings. Escaping them keeps the value identical when parsed back
    while making them visible in an editor. Characters beyond the BMP become surrogate
    pairs, as JSON requires. Only call this on JSON text, where such characters can only
    occur inside strings.
    """
    pattern = _pattern_for(json_text)
    if pattern is None:
        return json_text
    return pattern.sub(lambda match: _json_escape(match[0]), json_text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


REQUEST_TEXT_FIELDS = ("title", "description", "decision_reason", "blocked_path",
                       "display_name", "session_name")
"""The texts of a request a person reads besides its input (the dialog's header, a
notification's title and body): a hidden character in any of them is named as one in
the input is."""


def hidden_in_request_texts(request: ApprovalRequest) -> list[str]:
    """`describe_hidden` over the request's `REQUEST_TEXT_FIELDS` (unset ones skipped)."""
    return describe_hidden("".join(getattr(request, name) or ""
                                   for name in REQUEST_TEXT_FIELDS))


def hidden_in_value(value: object) -> list[str]:
    """Describe the hidden characters in every string (keys too) of a JSON-like value."""
    texts: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return describe_hidden("".join(reversed(texts)))
