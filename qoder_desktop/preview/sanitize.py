"""Bound model-supplied markdown and HTML before Qt's text engine sees it.

Option previews and plans come from the model, so they are hostile input (research §3):
Qt reads local files for `<img>`/`<link>`/CSS `url()`, hangs on a FIFO, decodes `data:`
images through every image plugin, and lays out nested tables in exponential time on the
GUI thread, where nothing can interrupt it. `SafePreviewBrowser` refuses every resource;
this module makes sure the document it gets is small and shallow to begin with:

* size cap `MAX_PREVIEW_CHARS` (64 Ki characters);
* HTML: a tag allow-list rebuilt through `html.parser`, nesting depth ≤ `MAX_DEPTH`, no
  nested tables, at most `MAX_TABLE_ROWS` rows and `MAX_TABLE_CELLS` cells; `<img>`,
  `<link>`, `<style>`, `<script>`, `<iframe>`, `<object>`, `<svg>` and friends are dropped,
  every `src`/`background` attribute is dropped, a `style` attribute that could load
  anything (`url(`, `expression`, `@import`, escapes) is dropped;
* markdown: images (`![alt](…)`, `![alt][ref]`, `![alt]`) become the text `[image: alt]`,
  raw HTML tags are backslash-escaped so they show as text, big tables are refused.

Anything over a limit falls back to plain text, with `simplified=True` and a reason the
view shows in a banner.

Qt's word wrap is also very slow on long runs without a break opportunity (a 60,000-
character word takes ~0.4 s, more with format changes inside it). `break_positions` says
where zero-width spaces go so no run is longer than `LONG_RUN`; `SafePreviewBrowser`
applies it to the *rendered* document, where the visible text is known exactly (markdown
can hide whitespace in link destinations and titles, and HTML splits a word over tags),
so no markdown or HTML syntax is ever touched. Qt-free.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from qoder_desktop.preview.html import (
    MAX_DEPTH,
    MAX_TABLE_CELLS,
    MAX_TABLE_DEPTH,
    MAX_TABLE_GRID,
    MAX_TABLE_ROWS,
    HtmlRebuilder,
    HtmlRefused,
    html_to_text,
    normalize_html,
    removed_note,
)

MAX_PREVIEW_CHARS = 64 * 1024
"""Previews longer than this (in characters) are cut and shown as plain text."""
__all__ = ["LONG_RUN", "MAX_DEPTH", "MAX_PREVIEW_CHARS", "MAX_TABLE_CELLS", "MAX_TABLE_DEPTH",
           "MAX_TABLE_GRID", "MAX_TABLE_ROWS", "WRAP_EVERY", "ZERO_WIDTH_SPACE", "SanitizedPreview",
           "break_positions", "rewrite_images", "sanitize_html", "sanitize_markdown",
           "sanitize_preview", "sniff_kind"]

LONG_RUN = 500
"""Runs without a break opportunity longer than this get zero-width spaces."""
WRAP_EVERY = 200
"""How often a zero-width space goes into such a run (in characters)."""
ZERO_WIDTH_SPACE = "\u200b"

PreviewKind = Literal["markdown", "html", "plain"]


@dataclass(frozen=True)
class SanitizedPreview:
    """A preview that is safe and cheap to hand to `QTextBrowser`.

    Attributes:
        kind: "markdown" or "html" (render as such), or "plain" (show as plain text).
        text: the text to render.
        simplified: True when the original was refused and `text` is a plain fallback.
        reason: why it was simplified, or a note on what was removed; "" when untouched.
    """

    kind: PreviewKind
    text: str
    simplified: bool = False
    reason: str = ""


def sniff_kind(text: str) -> Literal["markdown", "html"]:
    """HTML when the text starts with `<` after leading whitespace, else markdown."""
    return "html" if text.lstrip().startswith("<") else "markdown"


def _truncate(text: str, limit: int = MAX_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(text: str, reason: str) -> SanitizedPreview:
    return SanitizedPreview("plain", _truncate(text), simplified=True, reason=reason)


def sanitize_html(text: str) -> SanitizedPreview:
    """Rebuild `text` from allowed tags, or fall back to its plain text.

    Oversize HTML is never rebuilt, and the rebuild stops at the first limit it hits:
    both fall back to `html_to_text`, which costs a few regular expressions.
    """
    normalized = normalize_html(text[:MAX_PREVIEW_CHARS])
    if len(text) > MAX_PREVIEW_CHARS:
        return _plain(html_to_text(normalized),
                      f"The preview is {len(text):,} characters long; only the first "
                      f"{MAX_PREVIEW_CHARS:,} are shown, as plain text.")
    parser = HtmlRebuilder()
    try:
        parser.feed(normalized)
        parser.close()
    except HtmlRefused:
        return _plain(html_to_text(normalized),
                      f"The preview was shown as plain text because {parser.error}.")
    except Exception as exc:  # html.parser is lenient, but never let a preview crash us
        return _plain(text, f"The preview could not be read as HTML ({type(exc).__name__}).")
    rebuilt = parser.result()
    if len(rebuilt) > MAX_PREVIEW_CHARS:
        return _plain(html_to_text(normalized),
                      "The preview is too large to render; shown as plain text.")
    return SanitizedPreview("html", rebuilt, reason=removed_note(parser.removed))


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HTML_START = re.compile(r"<(?=[A-Za-z/!?])")


_BRACKET_OR_ESCAPE = re.compile(r"\\.|[\[\]()]", re.DOTALL)
_OPENER_OF = {"]": "[", ")": "("}


def _matching_brackets(text: str) -> dict[int, int]:
    """For every `[` and `(` of `text` that is closed, the index of its `]` or `)`.

    One pass with a stack per bracket kind; a backslash escapes the next character. An
    unclosed opener has no entry. Linear, so a text of unclosed `![` costs no rescans.
    """
    closing: dict[int, int] = {}
    stacks: dict[str, list[int]] = {"[": [], "(": []}
    for match in _BRACKET_OR_ESCAPE.finditer(text):
        char = match[0]
        if char in stacks:
            stacks[char].append(match.start())
        elif char in _OPENER_OF and stacks[_OPENER_OF[char]]:
            closing[stacks[_OPENER_OF[char]].pop()] = match.start()
    return closing


def _image_end(text: str, i: int, closing: dict[int, int]) -> int:
    """Given `text[i]` == '[' after '!', the index past `![alt]` plus `(…)` or `[…]`.

    Returns -1 when the bracket is never closed (then it is not an image). An unclosed
    `(` or `[` after `]` is not part of the image: the image ends at its `]`, and the text
    after it stays text.
    """
    alt_close = closing.get(i)
    if alt_close is None:
        return -1
    j = alt_close + 1
    if j < len(text) and text[j] in "([":
        target_close = closing.get(j)
        if target_close is not None:
            return target_close + 1
    return j


def _backslashes_before(text: str, index: int) -> int:
    count = 0
    while index > count and text[index - count - 1] == "\\":
        count += 1
    return count


def rewrite_images(text: str) -> tuple[str, int]:
    """Replace every markdown image by the escaped text `\\[image: alt\\]`; count them.

    Linear in the length of `text`. Only the image itself is replaced: an unclosed
    destination (`![x](` with no `)`) ends the image at its `]`, so what follows stays.
    """
    out: list[str] = []
    closing: dict[int, int] | None = None
    i, count, n = 0, 0, len(text)
    while i < n:
        start = text.find("![", i)
        if start < 0:
            out.append(text[i:])
            break
        if _backslashes_before(text, start) % 2:
            out.append(text[i:start + 2])
            i = start + 2
            continue
        if closing is None:
            closing = _matching_brackets(text)
        end = _image_end(text, start + 1, closing)
        if end < 0:
            out.append(text[i:start] + "!\\[")
            i = start + 2
            continue
        alt = text[start + 2:closing[start + 1]]
        alt = re.sub(r"[\[\]()!<>\\`*_]", "", alt).strip() or "no description"
        out.append(text[i:start])
        out.append(f"\\[image: {alt}\\]")
        if end == closing[start + 1] + 1 and end < n and text[end] in "([":
            out.append("\\")  # an unclosed destination stays text, never a link
        count += 1
        i = end
    return "".join(out), count


def _escape_html_outside_code(text: str) -> str:
    lines = text.split("\n")
    fence: str | None = None
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if fence is not None:
            if match and match[1][0] == fence[0] and len(match[1]) >= len(fence):
                fence = None
            continue
        if match:
            fence = match[1]
            continue
        pieces = re.split(r"(`+[^`]*?`+)", line)
        lines[index] = "".join(piece if piece.startswith("`") else
                               _HTML_START.sub(r"\\<", piece) for piece in pieces)
    return "\n".join(lines)


_MD_MAX_COLUMNS = 128
"""md4c (Qt's markdown reader) makes no table wider than this."""


def _markdown_grid(lines: list[str]) -> int:
    """An upper bound of the table positions Qt lays out for these lines.

    A table starts at a line with a `|` and, as in GitHub's dialect, runs on over the
    following lines up to a blank one, with or without pipes (each is a row, padded to
    the header's width). It has at most one column more than its widest line has pipes.
    Each run of non-blank lines with a pipe in it counts as its lines × that width;
    fenced code is no table and ends a run.
    """
    total = rows = widest = 0
    fence: str | None = None
    for line in [*lines, ""]:
        match = _FENCE.match(line)
        if fence is not None:
            if match and match[1][0] == fence[0] and len(match[1]) >= len(fence):
                fence = None
            continue
        if line.strip() and not match:
            rows += 1
            widest = max(widest, min(line.count("|") + 1, _MD_MAX_COLUMNS))
            continue
        if widest > 1:
            total += rows * widest
        rows = widest = 0
        fence = match[1] if match else None
    return total


def sanitize_markdown(text: str) -> SanitizedPreview:
    """Rewrite images to text, escape raw HTML, refuse oversize or table-heavy markdown."""
    if len(text) > MAX_PREVIEW_CHARS:
        return _plain(text, f"The preview is {len(text):,} characters long; only the first "
                            f"{MAX_PREVIEW_CHARS:,} are shown, as plain text.")
    lines = text.split("\n")
    table_lines = [line for line in lines if "|" in line]
    if len(table_lines) > MAX_TABLE_ROWS + 2:
        return _plain(text, f"The preview was shown as plain text because its tables have "
                            f"more than {MAX_TABLE_ROWS} rows.")
    if sum(line.count("|") for line in table_lines) > MAX_TABLE_CELLS + MAX_TABLE_ROWS:
        return _plain(text, f"The preview was shown as plain text because its tables have "
                            f"more than {MAX_TABLE_CELLS} cells.")
    if table_lines and _markdown_grid(lines) > MAX_TABLE_GRID:
        return _plain(text, f"The preview was shown as plain text because its tables would "
                            f"lay out more than {MAX_TABLE_GRID:,} cells.")
    rewritten, images = rewrite_images(text)
    rewritten = _escape_html_outside_code(rewritten)
    if len(rewritten) > MAX_PREVIEW_CHARS:
        return _plain(text, "The preview is too large to render; shown as plain text.")
    return SanitizedPreview("markdown", rewritten,
                            reason="Not shown: images." if images else "")


def sanitize_preview(text: str | None, kind: str | None = None) -> SanitizedPreview:
    """Make a model-supplied preview safe to render.

    Args:
        text: the preview as the model sent it (None or "" gives an empty plain preview).
        kind: "markdown", "html" or "plain"; None sniffs it with `sniff_kind`.

    Returns:
        A `SanitizedPreview`; never raises for any string.
    """
    if not text:
        return SanitizedPreview("plain", "")
    chosen = kind or sniff_kind(text)
    if chosen == "html":
        return sanitize_html(text)
    if chosen == "markdown":
        return sanitize_markdown(text)
    return SanitizedPreview("plain", _truncate(text),
                            simplified=len(text) > MAX_PREVIEW_CHARS,
                            reason="" if len(text) <= MAX_PREVIEW_CHARS else
                            f"Only the first {MAX_PREVIEW_CHARS:,} characters are shown.")


# Space, tab, line and paragraph breaks (U+2028/U+2029 in a QTextDocument), zero-width
# space, and the frame markers around tables and cells (U+FDD0/U+FDD1). Other blanks
# (no-break space, figure space, …) do not end a run: counting them in is the safe side.
_LONG_RUN = re.compile(r"[^ \t\n\r\u2028\u2029\u200b\ufdd0\ufdd1]{" + str(LONG_RUN + 1) + ",}")


def _tears(before: str, after: str) -> bool:
    """True when a break between these two characters would split what shows as one."""
    return (unicodedata.category(after)[0] == "M" or unicodedata.category(after) == "Cf"
            or unicodedata.category(before) == "Cf")


def break_positions(text: str) -> list[int]:
    """Where zero-width spaces go so that no run in `text` is longer than `LONG_RUN`.

    A run is a stretch without a space, tab, line or paragraph break, zero-width space or
    table frame marker. Runs up to `LONG_RUN` are left alone (URLs, hashes, identifiers);
    a longer one gets a break about every `WRAP_EVERY` characters, moved on a few
    characters when it would land before a combining mark or next to a format character
    such as a zero-width joiner.

    Returns:
        Ascending indices into `text`: insert one zero-width space before each (from the
        last one back, so the others stay valid).
    """
    positions: list[int] = []
    for run in _LONG_RUN.finditer(text):
        start, end = run.span()
        at = start + WRAP_EVERY
        while at < end:
            at = next((k for k in range(at, min(at + 8, end)) if not _tears(text[k - 1], text[k])),
                      at)
            positions.append(at)
            at += WRAP_EVERY
    return positions
