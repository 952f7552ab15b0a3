"""Long previews render in stages across loop turns, and end exactly as a direct render.

`PreviewPane.show_preview` sanitizes a preview longer than `STAGED_CHARS` on a worker
thread, then parses and lays it out in later loop turns (all three in one call blocked the loop
up to 0.5 s). Offscreen, real widgets, on the app's qasync loop.
"""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication

from qoder_desktop.preview.sanitize import sanitize_preview
from qoder_desktop.ui.dialogs import PlanDialog, QuestionDialog
from qoder_desktop.ui.widgets import preview_worker
from qoder_desktop.ui.widgets.preview import (
    RENDERING_MESSAGE,
    STAGED_CHARS,
    PreviewPane,
    SafePreviewBrowser,
)

MD_UNIT = ("## Section\n\nA paragraph with **bold**, `code`, a [link](https://example.com/p) "
           "and ![an image](file:///etc/passwd).\n\n- first\n- second\n\n> quoted\n\n")
HTML_UNIT = ("<div><h2>Section</h2><p>Text with <b>bold</b> and <a href='https://x.org'>a "
             "link</a>.</p><ul><li>one</li><li>two</li></ul><img src='/etc/passwd'></div>\n")
LONG = {
    "markdown": (MD_UNIT * (40_000 // len(MD_UNIT)), "markdown"),
    "html": (HTML_UNIT * (40_000 // len(HTML_UNIT)), "html"),
    "table": ("<table>" + "".join(f"<tr>{''.join(f'<td>{r}.{c}</td>' for c in range(10))}</tr>"
                                  for r in range(100)) + "</table>", "html"),
    "oversize": ("word " * 30_000, "markdown"),
    "long word": ("x" * 60_000, "markdown"),
    "plain": ("line\n" * 5_000, "plain"),
}


def _anchors(browser: SafePreviewBrowser) -> list[str]:
    hrefs, block = [], browser.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            if it.fragment().charFormat().isAnchor():
                hrefs.append(it.fragment().charFormat().anchorHref())
            it += 1
        block = block.next()
    return hrefs


@pytest.mark.parametrize("name", list(LONG))
def test_a_staged_preview_ends_as_the_direct_render_with_its_banner(qtbot, pane, name):
    text, kind = LONG[name]
    assert len(text) > STAGED_CHARS
    direct = SafePreviewBrowser()
    direct.resize(600, 400)
    qtbot.addWidget(direct)
    expected = direct.show_preview(text, kind)
    with qtbot.waitSignal(pane.browser.preview_shown, timeout=5000) as shown:
        assert pane.show_preview(text, kind) is None  # on its way
        assert pane.rendering and pane.browser.toPlainText() == RENDERING_MESSAGE
        assert not pane.banner.isVisible()  # the banner comes with its preview
    assert shown.args == [expected] and not pane.rendering
    assert pane.browser.document().toRawText() == direct.document().toRawText()
    assert pane.browser.toHtml() == direct.toHtml()
    assert _anchors(pane.browser) == _anchors(direct)
    assert pane.browser.last_preview == expected
    assert pane.banner.isVisible() == bool(expected.reason)
    if expected.reason:
        assert pane.banner.text().endswith(expected.reason)


def test_a_newer_preview_or_message_wins_over_one_still_on_its_way(qtbot, pane):
    shown: list[object] = []
    pane.browser.preview_shown.connect(shown.append)
    pane.show_preview(*LONG["markdown"])
    pane.show_preview(*LONG["html"])
    # The first's steps, had they gone on, would have shown it before the second.
    qtbot.waitUntil(lambda: not pane.rendering and bool(shown))
    second = sanitize_preview(*LONG["html"])
    assert shown == [second]
    assert "Section" in pane.browser.toPlainText() and pane.browser.last_preview == second
    pane.show_preview(*LONG["table"])
    pane.show_message("No preview for Option 3.")
    small = pane.show_preview("## small", "markdown")  # rendered at once
    assert shown == [second, small] and pane.browser.toPlainText() == "small"
    pane.show_preview(*LONG["table"])
    pane.show_message("No preview for Option 3.")
    assert pane.browser.toPlainText() == "No preview for Option 3." and not pane.rendering
    assert not pane.banner.isVisible()
    # A later long preview goes through the same worker and loop turns after the two
    # dropped tables: once it shows, neither table ever will.
    pane.show_preview(*LONG["markdown"])
    qtbot.waitUntil(lambda: len(shown) == 3)
    assert shown == [second, small, sanitize_preview(*LONG["markdown"])]


def test_a_pane_closed_while_rendering_is_left_alone(qtbot):
    pane = PreviewPane()
    pane.show()
    qtbot.waitExposed(pane)
    pane.show_preview(*LONG["html"])
    assert pane.rendering
    pane.deleteLater()
    # The pending steps die with the pane: nothing runs on a deleted view (an error in
    # a Qt callback fails the test). Another pane's render, through the same worker and
    # loop turns, ends after them.
    other = PreviewPane()
    qtbot.addWidget(other)
    other.show_preview(*LONG["html"])
    qtbot.waitUntil(lambda: not other.rendering)


def _armed_state(dialog) -> list[tuple[bool, str, str]]:  # type: ignore[no-untyped-def]
    """At the moment the dialog arms: (rendering, shown text, banner)."""
    seen: list[tuple[bool, str, str]] = []
    pane = dialog.preview

    def on_armed(armed: bool) -> None:
        if armed:
            seen.append((pane.rendering, pane.browser.toPlainText(), pane.banner.text()))
    dialog.gate.armed_changed.connect(on_armed)
    return seen


def test_a_sanitizer_that_fails_on_the_worker_shows_nothing_and_says_so(qtbot, pane,
                                                                        monkeypatch):
    def broken(text, kind):  # type: ignore[no-untyped-def]
        raise MemoryError
    monkeypatch.setattr(preview_worker, "sanitize_preview", broken)
    pane.show_preview(*LONG["html"])
    qtbot.waitUntil(lambda: not pane.rendering)
    assert pane.browser.toPlainText() == "" and "Section" not in pane.browser.toHtml()
    assert pane.banner.isVisible()
    assert pane.banner.text() == ("Simplified: The preview could not be rendered "
                                  "(MemoryError).")


def test_the_sanitizer_runs_off_the_gui_thread(qtbot, pane, monkeypatch):
    threads: list[str] = []

    def recording(text, kind):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return sanitize_preview(text, kind)
    monkeypatch.setattr(preview_worker, "sanitize_preview", recording)
    pane.show_preview(*LONG["markdown"])
    qtbot.waitUntil(lambda: not pane.rendering)
    assert threads and threads[0] != threading.main_thread().name
    assert "Section" in pane.browser.toPlainText()


def test_a_pane_not_on_screen_yet_renders_at_once(qtbot):
    pane = PreviewPane()
    qtbot.addWidget(pane)
    preview = pane.show_preview(*LONG["html"])
    assert preview is not None and not pane.rendering
    assert pane.browser.last_preview == preview
    assert "Section" in pane.browser.toPlainText()


@pytest.mark.arming
def test_a_long_plan_is_complete_when_the_dialog_opens(open_dialog, make_request):
    plan = "# Plan\n\n" + "".join(f"{n}. Step {n}: change module {n}\n" for n in range(1, 1201))
    plan += "\nLast: ![diagram](/etc/passwd) and run the tests\n"
    assert len(plan) > STAGED_CHARS
    dialog = PlanDialog(make_request("ExitPlanMode", {"plan": plan}, session_name="design"))
    seen = _armed_state(dialog)
    at_show: list[tuple[bool, str]] = []
    dialog.shown.connect(lambda *_: at_show.append(
        (dialog.preview.rendering, dialog.preview.browser.toPlainText())))
    open_dialog(dialog)
    assert len(seen) == 1 and len(at_show) == 1
    assert at_show[0] == seen[0][:2]  # nothing changed between opening and arming
    rendering, text, banner = seen[0]
    assert not rendering and "Step 1200: change module 1200" in text
    assert "[image: diagram] and run the tests" in text and banner.endswith("Not shown: images.")


@pytest.mark.arming
def test_a_question_dialog_shows_the_focused_long_preview_complete_when_armed(
        open_dialog, make_request, qtbot):
    previews = [LONG["markdown"][0], LONG["html"][0], LONG["long word"][0]]
    options = [{"label": f"Option {n + 1}", "description": "d", "preview": text}
               for n, text in enumerate(previews)]
    tool_input = {"questions": [{"question": "Which one?", "header": "Pick",
                                 "multiSelect": False, "options": options}]}
    dialog = QuestionDialog(make_request("AskUserQuestion", tool_input))
    seen = _armed_state(dialog)
    open_dialog(dialog)
    rendering, text, _banner = seen[0]
    direct = SafePreviewBrowser()
    qtbot.addWidget(direct)
    direct.show_preview(previews[0])
    assert not rendering and text == direct.toPlainText()
    buttons = [button for button, _option in dialog.boxes[0].option_buttons]
    point = QPointF(2, 2)
    QApplication.sendEvent(buttons[1], QEnterEvent(point, point, point))
    assert dialog.ui.previewCaption.text() == "Preview — Option 2"
    assert dialog.preview.browser.toPlainText() == RENDERING_MESSAGE  # never option 1's
    qtbot.waitUntil(lambda: not dialog.preview.rendering)
    direct.show_preview(previews[1])
    assert dialog.preview.browser.toPlainText() == direct.toPlainText()
