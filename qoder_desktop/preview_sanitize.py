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
view shows in a banner. Qt-free.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal

MAX_PREVIEW_CHARS = 64 * 1024
MAX_DEPTH = 16
MAX_TABLE_DEPTH = 1
MAX_TABLE_ROWS = 100
MAX_TABLE_CELLS = 1000
MAX_SPAN = 20

PreviewKind = Literal["markdown", "html", "plain"]

ALLOWED_TAGS = frozenset({
    "p", "br", "hr", "b", "strong", "i", "em", "u", "s", "strike", "del", "ins", "code", "pre",
    "kbd", "samp", "tt", "var", "cite", "dfn", "sub", "sup", "small", "big", "span", "div",
    "blockquote", "center", "address", "font", "nobr", "h1", "h2", "h3", "h4", "h5", "h6",
    "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "th", "td",
    "caption", "a",
})
VOID_TAGS = frozenset({"br", "hr"})
DROPPED_WITH_CONTENT = frozenset({
    "script", "style", "iframe", "object", "embed", "svg", "math", "template", "noscript",
    "head", "title", "textarea", "select", "audio", "video", "canvas", "frameset", "frame",
    "applet", "xml",
})
_ATTRIBUTES = {"align", "valign", "colspan", "rowspan", "width", "height", "border",
               "cellpadding", "cellspacing", "color", "bgcolor", "face", "size", "style",
               "href", "start", "type"}
_NUMERIC = {"colspan", "rowspan", "width", "height", "border", "cellpadding", "cellspacing",
            "start", "size"}
_BAD_STYLE = re.compile(r"url|expression|import|image|behavior|binding|src|\\|/\*|&|@",
                        re.IGNORECASE)
_BLOCKS = frozenset({"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6",
                     "blockquote", "pre", "table", "dt", "dd", "hr", "ul", "ol", "caption"})
_IMPLIED_CLOSE = {"p": {"p"}, "li": {"li"}, "dt": {"dt", "dd"}, "dd": {"dt", "dd"},
                  "tr": {"tr", "td", "th"}, "td": {"td", "th"}, "th": {"td", "th"}}
_SCOPES = {"li": {"ul", "ol"}, "dt": {"dl"}, "dd": {"dl"}, "tr": {"table"},
           "td": {"tr", "table"}, "th": {"tr", "table"}, "p": {"div", "td", "th", "li",
                                                              "blockquote"}}


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


class _TooComplex(Exception):
    """The HTML is over one of the limits; the message says which."""


def sniff_kind(text: str) -> Literal["markdown", "html"]:
    """HTML when the text starts with `<` after leading whitespace, else markdown."""
    return "html" if text.lstrip().startswith("<") else "markdown"


def _truncate(text: str, limit: int = MAX_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(text: str, reason: str) -> SanitizedPreview:
    return SanitizedPreview("plain", _truncate(text), simplified=True, reason=reason)


class _HtmlRebuilder(HTMLParser):
    """Re-emit only allowed tags/attributes, tracking depth and table limits."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.skip_depth = 0
        self.skip_tag = ""
        self.tables = 0
        self.rows = 0
        self.cells = 0
        self.removed: set[str] = set()
        self.error = ""

    def _fail(self, message: str) -> None:
        if not self.error:
            self.error = message

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip_depth:
            self.skip_depth += tag == self.skip_tag
            return
        if tag in DROPPED_WITH_CONTENT:
            self.removed.add(tag)
            self.skip_depth, self.skip_tag = 1, tag
            return
        if tag in _BLOCKS:
            self.text.append("\n")
        if tag not in ALLOWED_TAGS:
            if tag in ("img", "link", "input", "image", "base", "meta"):
                self.removed.add("img" if tag in ("img", "image", "input") else tag)
            return
        self._implied_close(tag)
        if tag == "table":
            if self.tables >= MAX_TABLE_DEPTH:
                self._fail("it nests tables")
            self.tables += 1
        elif tag == "tr":
            self.rows += 1
            if self.rows > MAX_TABLE_ROWS:
                self._fail(f"a table has more than {MAX_TABLE_ROWS} rows")
        elif tag in ("td", "th"):
            self.cells += 1
            if self.cells > MAX_TABLE_CELLS:
                self._fail(f"its tables have more than {MAX_TABLE_CELLS} cells")
        self.out.append(f"<{tag}{self._attributes(attrs)}>")
        if tag not in VOID_TAGS:
            self.stack.append(tag)
            if len(self.stack) > MAX_DEPTH:
                self._fail(f"it nests elements more than {MAX_DEPTH} deep")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        closes_itself = tag not in VOID_TAGS and not self.skip_depth
        if closes_itself or (self.skip_depth and tag == self.skip_tag):
            self.handle_endtag(tag)

    def _implied_close(self, tag: str) -> None:
        closes = _IMPLIED_CLOSE.get(tag)
        if not closes:
            return
        scopes = _SCOPES.get(tag, set())
        for index in range(len(self.stack) - 1, -1, -1):
            open_tag = self.stack[index]
            if open_tag in scopes:
                return
            if open_tag in closes:
                self._close_to(index)
                return

    def _close_to(self, index: int) -> None:
        while len(self.stack) > index:
            tag = self.stack.pop()
            self.tables -= tag == "table"
            self.out.append(f"</{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if self.skip_depth:
            if tag == self.skip_tag:
                self.skip_depth -= 1
            return
        if tag in _BLOCKS:
            self.text.append("\n")
        if tag in self.stack:
            self._close_to(len(self.stack) - 1 - self.stack[::-1].index(tag))

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        self.text.append(data)
        self.out.append(html.escape(data, quote=False))

    def _attributes(self, attrs: list[tuple[str, str | None]]) -> str:
        parts: list[str] = []
        for name, value in attrs:
            if name in ("src", "background", "srcset") or name.startswith("on"):
                self.removed.add("script" if name.startswith("on") else "img")
                continue
            if name not in _ATTRIBUTES or value is None:
                continue
            if name in _NUMERIC:
                match = re.fullmatch(r"\s*(\d{1,6})\s*(%?)\s*", value)
                if not match:
                    continue
                cap = MAX_SPAN if name in ("colspan", "rowspan") else 2000
                value = f"{min(int(match[1]), cap)}{match[2]}"
            elif name == "style" and _BAD_STYLE.search(value):
                self.removed.add("style")
                continue
            parts.append(f' {name}="{html.escape(value, quote=True)}"')
        return "".join(parts)

    def result(self) -> str:
        self._close_to(0)
        return "".join(self.out)


def sanitize_html(text: str) -> SanitizedPreview:
    """Rebuild `text` from allowed tags, or fall back to its plain text."""
    oversize = len(text) > MAX_PREVIEW_CHARS
    parser = _HtmlRebuilder()
    try:
        parser.feed(_normalize(text[:MAX_PREVIEW_CHARS]))
        parser.close()
    except Exception as exc:  # html.parser is lenient, but never let a preview crash us
        return _plain(text, f"The preview could not be read as HTML ({type(exc).__name__}).")
    plain = re.sub(r"\n{3,}", "\n\n", "".join(parser.text)).strip()
    if oversize:
        return _plain(plain, f"The preview is {len(text):,} characters long; only the first "
                             f"{MAX_PREVIEW_CHARS:,} are shown, as plain text.")
    if parser.error:
        return _plain(plain, f"The preview was shown as plain text because {parser.error}.")
    rebuilt = parser.result()
    if len(rebuilt) > MAX_PREVIEW_CHARS:
        return _plain(plain, "The preview is too large to render; shown as plain text.")
    return SanitizedPreview("html", rebuilt, reason=_removed_note(parser.removed))


def _removed_note(removed: set[str]) -> str:
    names = {"img": "images", "link": "linked files", "style": "styles that load files",
             "script": "scripts", "iframe": "embedded frames", "svg": "SVG drawings"}
    if not removed:
        return ""
    items = sorted({names.get(item, "embedded content") for item in removed})
    return "Not shown: " + ", ".join(items) + "."


_TAG = re.compile(r"""</?[A-Za-z][A-Za-z0-9-]*(?:\s+[^\s"'<>/=]+"""
                  r"""(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*\s*/?>""")


def _normalize(text: str) -> str:
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


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HTML_START = re.compile(r"<(?=[A-Za-z/!?])")


def _image_end(text: str, i: int) -> int:
    """Given `text[i]` == '[' after '!', the index past `![alt]` plus `(…)` or `[…]`.

    Returns -1 when the bracket is never closed (then it is not an image).
    """
    depth, j, n = 0, i, len(text)
    while j < n:
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "[":
            depth += 1
        elif text[j] == "]":
            depth -= 1
            if depth == 0:
                break
        j += 1
    if j >= n:
        return -1
    j += 1
    if j < n and text[j] in "([":
        opening, closing = text[j], ")" if text[j] == "(" else "]"
        depth = 0
        while j < n:
            if text[j] == "\\":
                j += 2
                continue
            depth += text[j] == opening
            depth -= text[j] == closing
            j += 1
            if depth == 0:
                break
    return min(j, n)


def rewrite_images(text: str) -> tuple[str, int]:
    """Replace every markdown image by the escaped text `\\[image: alt\\]`; count them."""
    out: list[str] = []
    i, count, n = 0, 0, len(text)
    while i < n:
        start = text.find("![", i)
        if start < 0:
            out.append(text[i:])
            break
        slashes = len(text[:start]) - len(text[:start].rstrip("\\"))
        if slashes % 2:
            out.append(text[i:start + 2])
            i = start + 2
            continue
        end = _image_end(text, start + 1)
        if end < 0:
            out.append(text[i:start] + "!\\[")
            i = start + 2
            continue
        alt_end = text.find("]", start + 2, end)
        alt = text[start + 2:alt_end if alt_end >= 0 else end]
        alt = re.sub(r"[\[\]()!<>\\`*_]", "", alt).strip() or "no description"
        out.append(text[i:start])
        out.append(f"\\[image: {alt}\\]")
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


def sanitize_markdown(text: str) -> SanitizedPreview:
    """Rewrite images to text, escape raw HTML, refuse oversize or table-heavy markdown."""
    if len(text) > MAX_PREVIEW_CHARS:
        return _plain(text, f"The preview is {len(text):,} characters long; only the first "
                            f"{MAX_PREVIEW_CHARS:,} are shown, as plain text.")
    table_lines = [line for line in text.split("\n") if "|" in line]
    if len(table_lines) > MAX_TABLE_ROWS + 2:
        return _plain(text, f"The preview was shown as plain text because its tables have "
                            f"more than {MAX_TABLE_ROWS} rows.")
    if sum(line.count("|") for line in table_lines) > MAX_TABLE_CELLS + MAX_TABLE_ROWS:
        return _plain(text, f"The preview was shown as plain text because its tables have "
                            f"more than {MAX_TABLE_CELLS} cells.")
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
