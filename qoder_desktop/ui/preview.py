"""A `QTextBrowser` that renders model-supplied markdown/HTML and loads nothing.

Qt's text engine reads local files for images, stylesheets and CSS `url()`, decodes
`data:` URLs, blocks forever on a FIFO and follows `file://` links (research §3). Here:

* `loadResource` returns an *empty but valid* value for every request (`QImage()` for
  images, `""` otherwise). Returning None is not enough: the document then falls back to
  reading the file itself.
* `setOpenLinks(False)`, `setOpenExternalLinks(False)`, `setSearchPaths([])`, and
  `doSetSource` does nothing, so nothing ever navigates.
* Every preview goes through `preview_sanitize` first (size, depth, no nested tables).
* A clicked link is reported through `link_requested`; `offer_link` opens only `https`
  links, after a confirmation that shows the full address. Other schemes are shown as
  text and never opened.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QImage, QTextDocument
from PySide6.QtWidgets import QLabel, QMessageBox, QTextBrowser, QVBoxLayout, QWidget

from qoder_desktop.preview_sanitize import SanitizedPreview, sanitize_preview
from qoder_desktop.visible import make_visible

_MARKDOWN_FEATURES = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
                      | QTextDocument.MarkdownFeature.MarkdownNoHTML)

_IMAGE_RESOURCE = QTextDocument.ResourceType.ImageResource.value


def plain_label(text: str = "", parent: QWidget | None = None, *, wrap: bool = True) -> QLabel:
    """A QLabel that can never interpret its text as rich text."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setText(text)
    return label


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
        self.document().setBaseUrl(QUrl())
        self.offer_links = offer_links
        self.last_preview: SanitizedPreview | None = None
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
        preview = sanitize_preview(text, kind)
        self.clear()
        if preview.kind == "markdown":
            self.document().setMarkdown(preview.text, _MARKDOWN_FEATURES)
        elif preview.kind == "html":
            self.document().setHtml(preview.text)
        else:
            self.setPlainText(make_visible(preview.text))
        self.last_preview = preview
        self.preview_shown.emit(preview)
        return preview

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
        self.browser.link_requested.connect(self.link_requested)
        layout.addWidget(self.banner)
        layout.addWidget(self.browser, 1)

    def show_preview(self, text: str | None, kind: str | None = None) -> SanitizedPreview:
        """Render a preview and show its banner when it was simplified or trimmed."""
        preview = self.browser.show_preview(text, kind)
        if preview.reason:
            prefix = "Simplified: " if preview.simplified else ""
            self.banner.setText(prefix + preview.reason)
            self.banner.setProperty("simplified", preview.simplified)
            self.banner.show()
        else:
            self.banner.hide()
        return preview

    def show_message(self, text: str) -> None:
        """Show a plain message (e.g. "No preview for this option") instead of a preview."""
        self.banner.hide()
        self.browser.setPlainText(text)
