"""A wrapped label remembers its heights, and the height is always Qt's for what it shows.

The header of a decision dialog (title, who asks, description, reason, blocked path) is
made of `WrapLabel`s, which keep the height for a width instead of laying the text out
again on each of the layouts' many questions. A height kept after the text, the font,
the style or the margins changed would cut the header's text off: each case below
compares with a plain QLabel laid out from scratch.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel

from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.ui.dialogs import dialog_for
from qoder_desktop.ui.widgets.wrap_label import WrapLabel

WORDS = "the agent wants to run a command that reads every file it can find " * 6


def _pair(qtbot, text: str) -> tuple[WrapLabel, QLabel]:
    labels = WrapLabel(), QLabel()
    for label in labels:
        qtbot.addWidget(label)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        label.setText(text)
    return labels


def test_the_height_is_qts_for_every_width_and_text(qtbot):
    wrap, plain = _pair(qtbot, WORDS)
    for width in (120, 300, 640, 300, 120):
        assert wrap.heightForWidth(width) == plain.heightForWidth(width)
    for text in ("short", WORDS * 2, "", WORDS):
        wrap.setText(text)
        plain.setText(text)
        for width in (120, 300, 640):
            assert wrap.heightForWidth(width) == plain.heightForWidth(width), (text, width)


def test_a_new_font_or_style_or_margin_gives_a_new_height(qtbot):
    wrap, plain = _pair(qtbot, WORDS)
    before = wrap.heightForWidth(300)
    big = QFont(wrap.font())
    big.setPointSize(big.pointSize() * 2)
    for label in (wrap, plain):
        label.setFont(big)
    assert wrap.heightForWidth(300) == plain.heightForWidth(300) > before
    for label in (wrap, plain):
        label.setStyleSheet("padding: 12px 40px;")
    assert wrap.heightForWidth(300) == plain.heightForWidth(300)
    for label in (wrap, plain):
        label.setContentsMargins(0, 30, 0, 30)
        label.setMargin(7)
        label.setIndent(25)
    assert wrap.heightForWidth(300) == plain.heightForWidth(300)
    for label in (wrap, plain):
        label.setWordWrap(False)
    assert wrap.heightForWidth(300) == plain.heightForWidth(300)


def test_a_spare_dialog_shows_its_whole_header_for_a_long_request(qtbot):
    """The header of a dialog filled in after it was laid out (a spare) is as tall as
    a plain label needs for the same text at the same width."""
    from qoder_desktop.ui.dialogs import ApprovalDialog

    dialog = ApprovalDialog(None, None, staged=True)
    qtbot.addWidget(dialog)
    dialog.finish_building()
    dialog.lay_out()
    short = ApprovalRequest(session_id="s", session_name="s", backend=Backend.CLAUDE,
                            tool_name="Bash", tool_input={"command": "ls"}, cwd="/tmp")
    long = short.model_copy(update={"title": WORDS[:150], "description": WORDS[:200]})
    dialog.load(long)
    dialog.show()
    qtbot.waitExposed(dialog)
    title = dialog.ui.titleLabel
    needed = _plain_height(qtbot, title.text(), title)
    assert title.height() >= needed > title.fontMetrics().height()
    fresh = dialog_for(long)
    qtbot.addWidget(fresh)
    fresh.show()
    qtbot.waitExposed(fresh)
    assert dialog.ui.headerScroll.height() == fresh.ui.headerScroll.height()


def _plain_height(qtbot, text: str, like: QLabel) -> int:
    plain = QLabel()
    qtbot.addWidget(plain)
    plain.setFont(like.font())
    plain.setWordWrap(True)
    plain.setTextFormat(Qt.TextFormat.PlainText)
    plain.setText(text)
    return plain.heightForWidth(like.width())
