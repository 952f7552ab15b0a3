"""The text level of model HTML: complete tags only, and the cheap plain-text view.

`normalize_html` keeps only complete tags and escapes every other `<` in one linear pass
(`html.parser` is quadratic on unterminated tags, quotes and comments); `html_to_text`
is the plain view of refused HTML, regular expressions only. Qt-free.
"""

from __future__ import annotations

import html
import re

DROPPED_WITH_CONTENT = frozenset({
    "script", "style", "iframe", "object", "embed", "svg", "math", "template", "noscript",
    "head", "title", "textarea", "select", "audio", "video", "canvas", "frameset", "frame",
    "applet", "xml",
})
"""Elements whose content is dropped with them (never shown as text either)."""
_BLOCKS = frozenset({"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6",
                     "blockquote", "pre", "table", "dt", "dd", "hr", "ul", "ol", "caption"})

_TAG_REST = (r"""(?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*"""
             r"""\s*/?>""")
"""A tag after its name: attributes, then `>` or `/>`."""
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*" + _TAG_REST)
_BLOCK_TAG = re.compile(r"</?(?:" + "|".join(sorted(_BLOCKS)) + r")(?![A-Za-z0-9-])" + _TAG_REST,
                        re.IGNORECASE)
_CELL_TAG = re.compile(r"</?t[dh](?![A-Za-z0-9-])" + _TAG_REST, re.IGNORECASE)
_DROPPED_OPEN = re.compile(r"<(" + "|".join(sorted(DROPPED_WITH_CONTENT)) + r")(?![A-Za-z0-9-])"
                           + _TAG_REST, re.IGNORECASE)


def _cells_apart(text: str) -> str:
    """One tab between neighbouring table cells' texts, none at the start of a line."""
    last_end = -1

    def tab(match: re.Match[str]) -> str:
        nonlocal last_end
        start, previous = match.start(), text[match.start() - 1:match.start()]
        adjacent, last_end = start == last_end, match.end()
        return "" if adjacent or previous in ("", "\n", "\t") else "\t"

    return _CELL_TAG.sub(tab, text)


def html_to_text(normalized: str) -> str:
    """The text of `normalize_html` output, cheaply: the plain view of refused HTML.

    Elements dropped with their content (`<script>`, `<style>`, `<svg>`, …) go up to their
    first closing tag (to the end when unclosed), block tags become line breaks, table
    cells are kept apart by a tab (`_cells_apart`), other tags vanish, character
    references are decoded. Linear: regular expressions, and at most one failed search
    per dropped element name.
    """
    pieces: list[str] = []
    i = 0
    unclosed: set[str] = set()
    while True:
        match = _DROPPED_OPEN.search(normalized, i)
        if match is None:
            pieces.append(normalized[i:])
            break
        pieces.append(normalized[i:match.start()])
        name = match[1].lower()
        close = (None if name in unclosed else
                 re.compile(rf"</{name}\s*>", re.IGNORECASE).search(normalized, match.end()))
        if close is None:
            unclosed.add(name)
            break
        i = close.end()
    text = _TAG.sub("", _cells_apart(_BLOCK_TAG.sub("\n", "".join(pieces))))
    return re.sub(r"\n{3,}", "\n\n", html.unescape(text)).strip()


def normalize_html(text: str) -> str:
    """Keep only complete tags; escape every other `<`; drop comments and doctypes.

    `html.parser` goes quadratic on unterminated tags, quotes and comments (seconds for
    50 KiB). After this linear pass it only ever sees complete constructs.
    """
    out: list[str] = []
    i = 0
    next_close: dict[str, int] = {}

    def find(needle: str, start: int) -> int:
        # A failed search means no later one can succeed: remember it (stays linear).
        known = next_close.get(needle)
        if known is not None and (known < 0 or known >= start):
            return known
        found = text.find(needle, start)
        next_close[needle] = found
        return found

    while True:
        j = text.find("<", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        if text.startswith("<!--", j):
            k = find("-->", j + 4)
            if k >= 0:
                i = k + 3
                continue
        match = _TAG.match(text, j)
        if match:
            out.append(match.group())
            i = match.end()
            continue
        if text.startswith(("<!", "<?"), j):
            k = find(">", j)
            if k >= 0:
                i = k + 1
                continue
        out.append("&lt;")
        i = j + 1
