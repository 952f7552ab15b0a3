"""The safe preview browser loads nothing, follows nothing and never hangs (offscreen)."""

from __future__ import annotations

import base64
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFont, QImage, QTextDocument
from PySide6.QtWidgets import QMessageBox

from qoder_desktop.preview.sanitize import LONG_RUN, MAX_PREVIEW_CHARS, ZERO_WIDTH_SPACE
from qoder_desktop.ui.widgets.preview import PreviewPane, SafePreviewBrowser


class SpyBrowser(SafePreviewBrowser):
    """Records every resource Qt asks for and what the browser answered."""

    def __init__(self) -> None:
        super().__init__(offer_links=False)
        self.calls: list[tuple[int, str, object]] = []

    def loadResource(self, type, name):  # type: ignore[no-untyped-def]
        result = super().loadResource(type, name)
        self.calls.append((type, QUrl(name).toString(), result))
        return result


def assert_all_empty(calls) -> None:  # type: ignore[no-untyped-def]
    for _type, _name, result in calls:
        assert result is not None
        assert (isinstance(result, QImage) and result.isNull()) or result == ""


@pytest.fixture
def browser(qtbot) -> SpyBrowser:
    widget = SpyBrowser()
    widget.resize(500, 400)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("TOPSECRET")
    return path


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.setblocking(False)
    yield server
    server.close()


def _payloads(secret: Path, port: int) -> list[str]:
    svg = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg' width='9' height='9'/>")
    return [
        f'<img src="{secret}">', f'<img src="file://{secret}">',
        f'<img src="http://127.0.0.1:{port}/x">',
        f'<img src="data:image/svg+xml;base64,{svg.decode()}">',
        f'<p style="background-image: url(file://{secret})">css</p>',
        f'<link rel="stylesheet" href="{secret}">',
        f'<table background="{secret}"><tr><td>cell</td></tr></table>',
    ]


def test_capabilities_are_off(browser):
    assert not browser.openLinks() and not browser.openExternalLinks()
    assert browser.searchPaths() == []


def test_sanitized_previews_load_nothing(browser, secret, listener):
    port = listener.getsockname()[1]
    for payload in _payloads(secret, port):
        browser.show_preview(f"<p>before</p>{payload}<p>after</p>")
        browser.grab()
        assert "TOPSECRET" not in browser.toPlainText()
        assert "before" in browser.toPlainText()
    browser.show_preview(f"![x]({secret})\n\n![y](http://127.0.0.1:{port}/y)", "markdown")
    browser.grab()
    assert_all_empty(browser.calls)
    with pytest.raises(BlockingIOError):
        listener.accept()


def test_raw_html_still_loads_nothing(browser, secret, listener):
    """Defence in depth: even unsanitized HTML gets only empty resources."""
    port = listener.getsockname()[1]
    for payload in _payloads(secret, port):
        browser.document().setHtml(payload)
        browser.grab()
        assert "TOPSECRET" not in browser.toPlainText()
    browser.document().setMarkdown(f"![x]({secret})")
    browser.grab()
    assert browser.calls, "Qt should have asked for at least one resource"
    assert_all_empty(browser.calls)
    with pytest.raises(BlockingIOError):
        listener.accept()


def test_preview_documents_still_answer_resources_empty(browser, secret, listener):
    """Each preview gets a fresh document; raw HTML set on it still loads nothing."""
    browser.show_preview("<p>first</p>")
    browser.show_preview("second", "markdown")
    port = listener.getsockname()[1]
    for payload in _payloads(secret, port):
        browser.document().setHtml(payload)
        browser.grab()
        assert "TOPSECRET" not in browser.toPlainText()
    assert browser.calls, "Qt should have asked for at least one resource"
    assert_all_empty(browser.calls)
    with pytest.raises(BlockingIOError):
        listener.accept()


class FifoWatchdog:
    """If the GUI thread ever blocks opening the FIFO for reading, unblock it and say so."""

    def __init__(self, fifo: Path) -> None:
        self.fifo = fifo
        self.done = threading.Event()
        self.rescued = False
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> FifoWatchdog:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(5)

    def _watch(self) -> None:
        while not self.done.wait(0.05):
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue  # ENXIO: nobody is reading, as it should be
            self.rescued = True
            os.close(fd)


def test_fifo_is_never_opened(browser, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with FifoWatchdog(fifo) as watchdog:
        browser.show_preview(f'<p>x</p><img src="{fifo}"><img src="file://{fifo}">')
        browser.grab()
        browser.show_preview(f"text ![pipe]({fifo})", "markdown")
        browser.grab()
        browser.document().setHtml(f'<img src="{fifo}">')  # unsanitized
        browser.grab()
        browser.document().setMarkdown(f"![pipe]({fifo})")
        browser.grab()
    assert not watchdog.rescued, "Qt opened the FIFO for reading"
    assert_all_empty(browser.calls)
    with pytest.raises(OSError) as info:
        os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    assert info.value.errno == 6  # ENXIO: no reader


def test_nested_tables_fall_back_to_plain_text(qtbot):
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show()
    html = "<table><tr><td>" * 30 + "deep" + "</td></tr></table>" * 30
    preview = pane.show_preview(html)
    pane.grab()
    assert preview.kind == "plain" and preview.simplified
    assert pane.browser.toPlainText().strip() == "deep"
    assert pane.banner.isVisible() and pane.banner.text().startswith("Simplified:")
    assert pane.banner.textFormat() == Qt.TextFormat.PlainText


def test_removed_images_are_mentioned(qtbot):
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_preview("<p>hi</p><img src='/etc/passwd'>")
    assert pane.banner.isVisible() and "images" in pane.banner.text()
    pane.show_preview("<p>plain and simple</p>")
    assert not pane.banner.isVisible()


def test_markdown_raw_html_shows_as_text(browser):
    browser.show_preview("a <b>bold</b> move ![x](y)", "markdown")
    assert browser.toPlainText().strip() == "a <b>bold</b> move [image: x]"


def _click_anchor(qtbot, browser: SafePreviewBrowser, text: str) -> None:
    cursor = browser.document().find(text)
    assert not cursor.isNull()
    cursor.setPosition(cursor.selectionStart() + 1)
    point = browser.cursorRect(cursor).center() + QPoint(2, 0)
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=point)


@pytest.fixture
def opened(monkeypatch) -> list[QUrl]:
    calls: list[QUrl] = []

    def fake_open(url: QUrl) -> bool:
        calls.append(url)
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", fake_open)
    return calls


def test_file_link_click_does_not_navigate(browser, qtbot, secret, opened):
    browser.show_preview(f'<p>see <a href="file://{secret}">the secret</a></p>')
    before = browser.toPlainText()
    with qtbot.waitSignal(browser.link_requested) as blocker:
        _click_anchor(qtbot, browser, "the secret")
    assert blocker.args[0].scheme() == "file"
    assert browser.toPlainText() == before and "TOPSECRET" not in browser.toPlainText()
    assert opened == []


def _box(parent) -> QMessageBox:  # type: ignore[no-untyped-def]
    boxes = parent.findChildren(QMessageBox)
    assert len(boxes) == 1
    return boxes[0]


def test_non_https_link_is_shown_not_opened(qtbot, secret, opened):
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_preview(f'<a href="file://{secret}">open me</a>')
    _click_anchor(qtbot, pane.browser, "open me")
    box = _box(pane.browser)
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert f"file://{secret}" in box.text() and "not opened" in box.text()
    box.button(QMessageBox.StandardButton.Close).click()
    assert opened == []


def test_https_link_opens_only_after_confirmation(qtbot, opened):
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show()
    url = "https://example.org/docs?q=<b>1</b>"
    pane.show_preview(f'<a href="{url}">docs</a>')
    _click_anchor(qtbot, pane.browser, "docs")
    box = _box(pane.browser)
    assert "https://example.org/docs?q=" in box.text()
    assert box.textFormat() == Qt.TextFormat.PlainText
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert opened == []
    with qtbot.waitSignal(box.destroyed):
        box.deleteLater()
    _click_anchor(qtbot, pane.browser, "docs")
    box = next(b for b in pane.browser.findChildren(QMessageBox) if b.isVisible())
    box.button(QMessageBox.StandardButton.Open).click()
    assert [u.host() for u in opened] == ["example.org"]


_RUN_ENDS = " \t\n\r\u2028\u2029\u200b\ufdd0\ufdd1"


def _longest_run(browser: SafePreviewBrowser) -> int:
    longest = run = 0
    for char in browser.document().toRawText():
        run = 0 if char in _RUN_ENDS else run + 1
        longest = max(longest, run)
    return longest


def _hrefs(document: QTextDocument) -> list[str]:
    hrefs = []
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().isAnchor():
                hrefs.append(fragment.charFormat().anchorHref())
            fragments += 1
        block = block.next()
    return hrefs


def test_a_60k_word_renders_with_break_opportunities(browser):
    word = "x" * 60_000
    preview = browser.show_preview(word, "markdown")
    assert preview.kind == "markdown" and not preview.simplified
    shown = browser.document().toRawText()
    assert ZERO_WIDTH_SPACE in shown and shown.replace(ZERO_WIDTH_SPACE, "") == word
    assert _longest_run(browser) <= LONG_RUN


def test_an_oversize_word_is_simplified_and_still_broken(qtbot):
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_preview("x" * (MAX_PREVIEW_CHARS * 3), "markdown")
    qtbot.waitUntil(lambda: not pane.rendering)  # a long preview is rendered in stages
    preview = pane.browser.last_preview
    assert preview.kind == "plain" and preview.simplified
    assert pane.banner.isVisible() and pane.banner.text().startswith("Simplified:")
    assert _longest_run(pane.browser) <= LONG_RUN


@pytest.mark.parametrize(("text", "kind"), [
    # whitespace hidden in link destinations and titles does not break the shown text
    (("[" + "x" * 190 + "](<1 b>)") * 300, "markdown"),
    (("[" + "x" * 190 + '](https://x.org/p "a\nb")') * 300, "markdown"),
    ("[" + "y" * 5000 + "](https://x.org/" + "z" * 3000 + ")", "markdown"),
    # one word over many inline elements
    ("<p>" + "".join(f"<b>{'x' * 99}</b><i>y</i>" for _ in range(500)) + "</p>", "html"),
    ("<table><tr><td>" + "x" * 20_000 + "</td><td>y</td></tr></table>", "html"),
    ("| a | b |\n|---|---|\n| " + "x" * 20_000 + " | y |\n", "markdown"),
    ("    " + "x" * 20_000, "markdown"),  # an indented code block wraps, unlike a fenced one
    ("→" * 20_000, "plain"),
])
def test_breaks_go_into_the_rendered_text_not_the_syntax(browser, text, kind):
    preview = browser.show_preview(text, kind)
    assert not preview.simplified
    assert _longest_run(browser) <= LONG_RUN
    reference = QTextDocument()
    if preview.kind == "markdown":
        reference.setMarkdown(preview.text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    elif preview.kind == "html":
        reference.setHtml(preview.text)
    else:
        reference.setPlainText(preview.text)
    assert _hrefs(browser.document()) == _hrefs(reference)  # link targets untouched
    if "](" in text:
        assert _hrefs(reference)
    assert browser.toPlainText().replace(ZERO_WIDTH_SPACE, "") == reference.toPlainText()


@pytest.mark.parametrize(("text", "kind"), [
    ("```\n" + "x" * 20_000 + "\n```\n", "markdown"),
    ("<pre>" + "x" * 20_000 + "</pre>", "html"),
    ("https://example.com/" + "a" * (LONG_RUN - 30), "markdown"),
])
def test_unwrapped_code_and_short_runs_are_left_alone(browser, text, kind):
    browser.show_preview(text, kind)
    assert ZERO_WIDTH_SPACE not in browser.document().toRawText()


@pytest.mark.parametrize("text", ["\U0001F600" * 3000, "a\U0001F600" * 3000,
                                  "\U0001F600" * 700 + "x" * 3000 + "e\u0301" * 1000])
def test_breaks_land_between_characters_beyond_the_bmp(browser, text):
    browser.show_preview(text, "plain")
    shown = browser.toPlainText()
    assert ZERO_WIDTH_SPACE in shown and shown.replace(ZERO_WIDTH_SPACE, "") == text
    assert _longest_run(browser) <= LONG_RUN


def test_messages_get_breaks_too(qtbot):
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show_message("No preview for " + "x" * 20_000)
    assert _longest_run(pane.browser) <= LONG_RUN


def test_preview_documents_follow_the_font_and_are_not_kept(browser):
    browser.setFont(QFont("Monospace", 17))
    for n in range(20):
        browser.show_preview(f"preview {n}", "markdown")
    assert browser.document().defaultFont().pointSize() == 17
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert browser.findChildren(QTextDocument) == [browser.document()]


DARK_CARD = ('<div style="border:1px solid #333;padding:8px;background:#222;color:#eee">'
             '<b>Settings</b><p>Theme: <i>dark</i></p>'
             '<table><tr><td>Font</td><td>Mono 11</td></tr></table></div>')


def test_a_dark_card_preview_is_a_dark_page_with_light_text_everywhere(qtbot):
    """No dark bars behind single lines, no light text left on white in a table cell."""
    browser = SafePreviewBrowser()
    qtbot.addWidget(browser)
    browser.resize(360, 240)
    browser.show_preview(DARK_CARD, "html")
    browser.show()
    qtbot.waitExposed(browser)
    image = browser.viewport().grab().toImage()
    corner = image.pixelColor(image.width() - 4, image.height() - 4)  # below every line
    assert corner.lightness() < 60, corner.name()
    document = browser.document()
    cursor = document.find("Mono 11")
    assert cursor.charFormat().foreground().color().lightness() > 200  # light, on dark
