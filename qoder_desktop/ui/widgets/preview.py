"""A `QTextBrowser` that renders model-supplied markdown/HTML and loads nothing.

Qt's text engine reads local files for images, stylesheets and CSS `url()`, decodes
`data:` URLs, blocks forever on a FIFO and follows `file://` links (research §3). Here:

* `loadResource` returns an *empty but valid* value for every request (`QImage()` for
  images, `""` otherwise). Returning None is not enough: the document then falls back to
  reading the file itself.
* `setOpenLinks(False)`, `setOpenExternalLinks(False)`, `setSearchPaths([])`, and
  `doSetSource` does nothing, so nothing ever navigates.
* Every preview goes through `preview_sanitize` first (size, depth, no nested tables).
* Each preview is built in a fresh document that is not shown yet, and runs longer than
  `LONG_RUN` characters without a break opportunity get zero-width spaces
  (`add_break_opportunities`) before the view lays it out: Qt's word wrap takes ~0.4 s
  on a 60,000-character word, on the GUI thread. The new document belongs to the same
  owner as the browser's own, so resource requests still end in `loadResource` below.
* HTML previews get a small default stylesheet (`PREVIEW_CSS`: table cells with some
  room) so a table reads as a table; the sanitizer gives a "card" preview's colours to
  the whole page (`preview.html`), so a dark card is dark, not striped.
* `PreviewPane` renders a preview longer than `STAGED_CHARS` in stages, one per loop
  turn, once it is on screen (before that at once, so a dialog opens complete):
  sanitize on a worker thread (`preview_worker`), parse into the new document, then
  show it (Qt's first layout). Each step is bounded (the sanitizer's limits, a table's
  grid), so none blocks the loop long, where all three together did. Meanwhile the
  view says `RENDERING_MESSAGE`; a newer preview or message cancels the rest.
* The vertical scroll bar is always shown, so a preview is laid out once at one width
  (a bar that appears after the first layout narrows the view and Qt starts over).
* A clicked link is reported through `link_requested`; `offer_link` opens only `https`
  links, after a confirmation that shows the full address. Other schemes are shown as
  text and never opened.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QImage, QTextCursor, QTextDocument
from PySide6.QtWidgets import QLabel, QMessageBox, QTextBrowser, QVBoxLayout, QWidget
from shiboken6 import isValid

from qoder_desktop.preview.sanitize import (
    ZERO_WIDTH_SPACE,
    SanitizedPreview,
    break_positions,
    sanitize_preview,
)
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.scheduling import in_next_turn
from qoder_desktop.ui.widgets.preview_worker import sanitize_later
from qoder_desktop.ui.widgets.wrap_label import WrapLabel

_MARKDOWN_FEATURES = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
                      | QTextDocument.MarkdownFeature.MarkdownNoHTML)

_IMAGE_RESOURCE = QTextDocument.ResourceType.ImageResource.value
STAGED_CHARS = 4096
"""`PreviewPane` renders previews longer than this in stages, one step per loop turn."""
RENDERING_MESSAGE = "Rendering the preview…"
"""What the view says while a staged preview is on its way (a few loop turns)."""
PREVIEW_CSS = "td, th { padding: 2px 8px; } th { text-align: left; }"
"""The default stylesheet of HTML previews (a model's own styles still apply over it)."""


def plain_label(text: str = "", parent: QWidget | None = None, *, wrap: bool = True) -> QLabel:
    """A QLabel that can never interpret its text as rich text (a `WrapLabel` when it
    wraps)."""
    label = WrapLabel(parent) if wrap else QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setText(text)
    return label


def _utf16_offsets(text: str, indices: list[int]) -> list[int]:
    """Document positions (UTF-16 code units) of ascending indices into `text`."""
    if not text or max(text) < "\U00010000":
        return indices
    offsets: list[int] = []
    done = units = 0
    for index in indices:
        units += len(text[done:index].encode("utf-16-le")) // 2
        done = index
        offsets.append(units)
    return offsets


def add_break_opportunities(document: QTextDocument) -> int:
    """Put zero-width spaces into the document's long runs (`break_positions`).

    Works on the visible text, so links keep their targets and no syntax is touched.
    Blocks Qt never wraps (code blocks, `<pre>`) are left as they are: their lines cost
    little however long. One edit block, so the whole pass costs about a millisecond; call
    it before the document is shown, or the view lays it out once without the breaks.

    Returns:
        How many zero-width spaces went in.
    """
    text = document.toRawText()
    positions = _utf16_offsets(text, break_positions(text))
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    added = 0
    for position in reversed(positions):
        if document.findBlock(position).blockFormat().nonBreakableLines():
            continue
        cursor.setPosition(position)
        cursor.insertText(ZERO_WIDTH_SPACE)
        added += 1
    cursor.endEditBlock()
    return added


class SafePreviewBrowser(QTextBrowser):
    """Read-only rich-text view for hostile markdown/HTML; loads and follows nothing.

    Signals:
        link_requested(QUrl): the user clicked a link (never followed automatically).
        preview_shown(object): a preview was rendered; carries its `SanitizedPreview`.
    """

    link_requested = Signal(QUrl)
    preview_shown = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, offer_links: bool = True) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setSearchPaths([])
        self.setUndoRedoEnabled(False)
        # A scroll bar that comes and goes changes the viewport's width, and Qt lays the
        # whole document out again at the new width: a long preview was laid out twice.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.document().setBaseUrl(QUrl())
        # Previews' documents belong to the browser: a document asks its parent's
        # invokable loadResource(int, QUrl) first, which is ours (the browser's own first
        # document belongs to Qt's text control, which forwards to it). Not asking Qt for
        # that control: wrapping it costs PySide ~8 MB once.
        self._own_document: QTextDocument | None = None
        self.offer_links = offer_links
        self.last_preview: SanitizedPreview | None = None
        self._generation = 0
        """Bumped by every new preview or text: a staged step of an older one stops."""
        self._staged = False
        self.anchorClicked.connect(self._on_anchor)

    def loadResource(self, type: int, name: QUrl | str) -> object:
        """Refuse every resource with an empty, non-null value (never None)."""
        if type == _IMAGE_RESOURCE:
            return QImage()
        return ""

    def doSetSource(self, name: QUrl | str, type: object = None) -> None:
        """Never navigate anywhere."""

    def show_preview(self, text: str | None, kind: str | None = None) -> SanitizedPreview:
        """Sanitize and render `text` ("markdown", "html", "plain" or None to sniff)."""
        self._generation += 1  # a staged preview still on its way is not shown any more
        preview = sanitize_preview(text, kind)
        self._install(self._generation, preview, self._parsed(preview))
        return preview

    def show_preview_staged(self, text: str, kind: str | None = None) -> None:
        """Like `show_preview`, in stages: sanitize on a worker thread, then parse, then
        lay out, one step per loop turn.

        Until the preview is in (`rendering` is True) the view says it is being rendered;
        `preview_shown` is emitted when it is. A later preview or text cancels it. If the
        sanitizer fails, the view says so and shows nothing of the preview.
        """
        self.show_text(RENDERING_MESSAGE)
        generation = self._generation
        self._staged = True
        sanitize_later(text, kind, partial(self._parse_step, generation))

    @property
    def rendering(self) -> bool:
        """True while a staged preview is on its way (the view shows `RENDERING_MESSAGE`)."""
        return self._staged

    def _parse_step(self, generation: int, result: SanitizedPreview | BaseException) -> None:
        if not isValid(self) or generation != self._generation:
            return
        preview = result if isinstance(result, SanitizedPreview) else SanitizedPreview(
            "plain", "", simplified=True,
            reason=f"The preview could not be rendered ({type(result).__name__}).")
        document = self._parsed(preview)
        in_next_turn(partial(self._install, generation, preview, document), self)

    def _install(self, generation: int, preview: SanitizedPreview,
                 document: QTextDocument) -> None:
        if generation != self._generation:
            document.deleteLater()
            return
        self._staged = False
        self._show_document(document)
        self.last_preview = preview
        self.preview_shown.emit(preview)

    def _parsed(self, preview: SanitizedPreview) -> QTextDocument:
        """A new document holding `preview`, with its break opportunities, not shown yet."""
        document = self._new_document()
        if preview.kind == "markdown":
            document.setMarkdown(preview.text, _MARKDOWN_FEATURES)
        elif preview.kind == "html":
            document.setDefaultStyleSheet(PREVIEW_CSS)
            document.setHtml(preview.text)
        else:
            document.setPlainText(make_visible(preview.text))
        add_break_opportunities(document)
        return document

    def show_text(self, text: str) -> None:
        """Show plain text that is not a preview (a message); long runs still get breaks."""
        self._generation += 1
        self._staged = False
        document = self._new_document()
        document.setPlainText(text)
        add_break_opportunities(document)
        self._show_document(document)

    def _new_document(self) -> QTextDocument:
        document = QTextDocument(self)
        document.setUndoRedoEnabled(False)
        document.setBaseUrl(QUrl())
        document.setDefaultFont(self.font())  # QTextEdit does this for its own document
        return document

    def _show_document(self, document: QTextDocument) -> None:
        old = self._own_document
        self.setDocument(document)  # lays it out, once, with the breaks already in
        self._own_document = document
        # The text control deletes only the document it made itself; the previous
        # preview's is ours to delete.
        if old is not None and isValid(old) and old is not document:
            old.deleteLater()

    def _on_anchor(self, url: QUrl) -> None:
        self.link_requested.emit(url)
        if self.offer_links:
            offer_link(url, self)


def offer_link(url: QUrl, parent: QWidget) -> QMessageBox:
    """Ask before opening an https link; say plainly that any other link is not opened.

    The box opens with `open()` (never `exec()`); the address is shown as plain text, in
    its encoded form with hidden characters made visible.

    Returns:
        The message box (already open).
    """
    address = make_visible(url.toString(QUrl.ComponentFormattingOption.FullyEncoded))
    box = QMessageBox(parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setWindowTitle("Open link")
    if url.scheme().lower() == "https" and url.host():
        box.setIcon(QMessageBox.Icon.Question)
        box.setText("Open this address in your web browser?\n\n" + address)
        box.setStandardButtons(QMessageBox.StandardButton.Open
                               | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def done(result: int) -> None:
            if result == QMessageBox.StandardButton.Open:
                QDesktopServices.openUrl(url)
        box.finished.connect(done)
    else:
        box.setIcon(QMessageBox.Icon.Information)
        box.setText("This link is not opened (only https links can be):\n\n" + address)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.open()
    return box


class PreviewPane(QWidget):
    """A `SafePreviewBrowser` with a banner line above it saying what was simplified.

    Signals:
        link_requested(QUrl): forwarded from the browser.
    """

    link_requested = Signal(QUrl)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.banner = plain_label()
        self.banner.setObjectName("previewBanner")
        self.banner.hide()
        self.browser = SafePreviewBrowser(self)
        self.browser.setObjectName("previewBrowser")
        self.browser.setAccessibleName("Preview")
        self.browser.setAccessibleDescription("The option's preview, as the agent sent it")
        self.browser.link_requested.connect(self.link_requested)
        self.browser.preview_shown.connect(self._show_banner)
        layout.addWidget(self.banner)
        layout.addWidget(self.browser, 1)

    def show_preview(self, text: str | None,
                     kind: str | None = None) -> SanitizedPreview | None:
        """Render a preview and show its banner when it was simplified or trimmed.

        A preview longer than `STAGED_CHARS` in a pane on screen is rendered in stages
        (`SafePreviewBrowser.show_preview_staged`: sanitized on a worker thread, parsed
        and laid out in later loop turns, its banner with it); then this returns None,
        `rendering` says it is on its way and `browser.last_preview` is it once shown.
        A pane not on screen yet renders at once, so what it shows is complete before
        anyone can see it (a plan dialog renders its plan before it opens).
        """
        if text and len(text) > STAGED_CHARS and self.isVisible():
            self.banner.hide()
            self.browser.show_preview_staged(text, kind)
            return None
        return self.browser.show_preview(text, kind)

    @property
    def rendering(self) -> bool:
        """True while a staged preview is on its way."""
        return self.browser.rendering

    def _show_banner(self, preview: SanitizedPreview) -> None:
        if preview.reason:
            prefix = "Simplified: " if preview.simplified else ""
            self.banner.setText(prefix + preview.reason)
            self.banner.setProperty("simplified", preview.simplified)
            self.banner.show()
        else:
            self.banner.hide()

    def show_message(self, text: str) -> None:
        """Show a plain message (e.g. "No preview for this option") instead of a preview."""
        self.banner.hide()
        self.browser.show_text(text)
