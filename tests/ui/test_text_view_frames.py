"""The decision dialogs' text views keep a visible frame without a stylesheet border.

A `border` or `border-radius` in the stylesheet on a scroll area (QPlainTextEdit,
QTextEdit, QTextBrowser) makes Qt's stylesheet painter keep about 0.9 KB of heap for
every such view it paints, and never give it back. A new dialog is made for every request,
so over a week on the desk that was megabytes. The views draw their own frame instead
(QFrame's StyledPanel, as the application style draws it).
"""

from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QAbstractScrollArea, QFrame

from qoder_desktop.ui import icons
from qoder_desktop.ui.dialogs import ApprovalDialog

TEXT_VIEW_NAMES = ("jsonEdit", "jsonDiffView", "diffView", "commandView", "previewBrowser")
TEXT_VIEW_TYPES = ("QAbstractScrollArea", "QPlainTextEdit", "QTextEdit", "QTextBrowser")


def _rules(stylesheet: str) -> list[tuple[str, str]]:
    """(selector, body) of every rule in a stylesheet, comments removed."""
    text = re.sub(r"/\*.*?\*/", "", stylesheet, flags=re.DOTALL)
    pairs = re.findall(r"([^{}]+)\{([^{}]*)\}", text)
    return [(selector.strip(), body) for selector, body in pairs]


def _styles_a_dialog_text_view(selector: str) -> bool:
    """Whether one selector (no commas) can reach a decision dialog's text view."""
    subject = selector.split()[-1]
    subject = re.split(r"::?", subject, maxsplit=1)[0]  # the widget, not its sub-controls
    type_name, _, object_name = subject.partition("#")
    if object_name:
        return object_name in TEXT_VIEW_NAMES
    return type_name in TEXT_VIEW_TYPES or type_name in ("*", "")


def test_the_stylesheet_puts_no_border_on_the_dialogs_text_views() -> None:
    """A border or border-radius there keeps Qt heap for every dialog painted (see above)."""
    offending = [
        selector
        for selectors, body in _rules(icons.stylesheet())
        for selector in selectors.split(",")
        if _styles_a_dialog_text_view(selector.strip()) and re.search(r"\bborder", body)
    ]
    assert offending == []


def test_the_check_sees_a_border_rule_on_a_text_view() -> None:
    """The stylesheet check above would catch the rule it guards against."""
    leaking = 'QDialog[decisionDialog="true"] QTextEdit#commandView { border-radius: 4px; }'
    [(selector, body)] = _rules(leaking)
    assert _styles_a_dialog_text_view(selector) and "border" in body


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Bash", {"command": "git status && make -j4", "description": "Build"}),
    ("Write", {"file_path": "/work/proj/readme.md", "content": "# Title\n\n- one\n"}),
    ("Edit", {"file_path": "/work/proj/a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}),
])
def test_each_text_view_draws_its_own_visible_frame(open_dialog, make_request, tool,
                                                    tool_input) -> None:
    """The views shown in an approval dialog still have a border a person can see."""
    dialog, _ = open_dialog(ApprovalDialog(make_request(tool, tool_input, cwd="/work/proj")))
    views = [view for view in dialog.findChildren(QAbstractScrollArea)
             if view.objectName() in TEXT_VIEW_NAMES and view.isVisibleTo(dialog)]
    assert views, f"no text view shown for {tool}"
    picture = dialog.grab().toImage()
    for view in views:
        assert view.frameShape() == QFrame.Shape.StyledPanel, view.objectName()
        assert view.frameWidth() >= 1, view.objectName()
        corner = view.mapTo(dialog, view.rect().topLeft())
        x, y = corner.x(), corner.y() + view.height() // 2  # the left edge, half-way down
        edge = picture.pixelColor(x, y)
        inside = picture.pixelColor(x + view.frameWidth() + 2, y)
        outside = picture.pixelColor(x - 2, y)
        assert edge != inside and edge != outside, (view.objectName(), edge.name(),
                                                   inside.name(), outside.name())
