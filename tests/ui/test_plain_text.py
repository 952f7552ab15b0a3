"""Agent text never reaches Qt as rich text: tooltips, labels, tray texts (an
agent's markup would render, or hang Qt's layout).

Qt treats a tooltip or label as rich text when `Qt.mightBeRichText` says so, and rich
text loads `<img src=…>` from disk (a FIFO would hang the GUI thread). The oracle here,
`render_like_qt`, renders a string the way a tooltip label does, in a document whose
resource hook records every load: bounded (a regular file, never a FIFO) and exact.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path
from typing import Any

import pytest
from PySide6 import QtGui
from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QHelpEvent, QImage, QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
)
from qoder_desktop.ui.plain_text import notification_text, tooltip
from qoder_desktop.ui.tray import Tray, format_notification
from qoder_desktop.ui.widgets.queue_view import COL_SESSION, COL_WHAT
from qoder_desktop.ui.widgets.rules_view import COL_RULE
from qoder_desktop.ui.widgets.session_list import COL_CWD, COL_NAME
from qoder_desktop.ui.windows.main_window import MainWindow


class RecordingDocument(QTextDocument):
    """A document that records every resource Qt asks for and returns an empty one."""

    def __init__(self) -> None:
        super().__init__()
        self.requested: list[str] = []

    def loadResource(self, kind: int, name: QUrl) -> Any:
        self.requested.append(name.toString())
        return QImage() if kind == QTextDocument.ResourceType.ImageResource.value else ""


def render_like_qt(text: str) -> tuple[str, list[str]]:
    """What a tooltip label shows for `text`, and which resources it would load."""
    if not QtGui.Qt.mightBeRichText(text):
        return text, []
    document = RecordingDocument()
    document.setHtml(text)
    document.size()  # lays it out: images are asked for here
    return document.toPlainText().replace("\u2029", "\n"), document.requested


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("S3CRET")
    return path


def attack(secret: Path) -> str:
    return f"<b>x</b><img src={secret}>"


def assert_shown_literally(tip: str, expected: str, secret: Path) -> None:
    shown, loads = render_like_qt(tip)
    assert loads == [], f"Qt would load {loads} for tooltip {tip!r}"
    assert shown == expected
    assert str(secret) in shown


def test_the_oracle_catches_an_unprotected_tooltip(secret: Path) -> None:
    _, loads = render_like_qt(attack(secret))
    assert loads and str(secret) in loads[0]


@pytest.mark.parametrize("text", [
    "<img src=/dev/zero>", "echo <b>hi</b> && cat a&b", "line one\n<img src=x>\n  indented",
    "plain text", "a < b and c > d", "&lt;img src=x&gt;",
])
def test_tooltip_shows_exactly_the_text_and_loads_nothing(text: str) -> None:
    shown, loads = render_like_qt(tooltip(text))
    assert loads == []
    assert shown == text


def test_tooltip_makes_hidden_characters_visible() -> None:
    shown, _ = render_like_qt(tooltip("echo 'ok' \u202e ; rm -rf ~"))
    assert "\u202e" not in shown and "RIGHT-TO-LEFT OVERRIDE" in shown


def make_session(name: str, cwd: str) -> SessionInfo:
    return SessionInfo(name=name, backend=Backend.EXTERNAL, cwd=cwd, state=SessionState.RUNNING)


def hover(view: Any, rect: Any) -> None:
    event = QHelpEvent(QEvent.Type.ToolTip, rect.center(),
                       view.viewport().mapToGlobal(rect.center()))
    QApplication.sendEvent(view.viewport(), event)


def test_queue_rows_session_list_and_folder_line_show_markup_as_text(
        window: MainWindow, secret: Path) -> None:
    evil = attack(secret)
    info = make_session(evil, f"/work/{evil}")
    window.set_sessions([info])
    request = ApprovalRequest(session_id=info.session_id, session_name=info.name,
                              backend=info.backend, tool_name="Bash",
                              tool_input={"command": f"echo {evil}"})
    window.set_pending([request])
    queue = window.ui.queueView
    item = queue.item_for(request.request_id)
    assert item is not None
    hover(queue, queue.visualItemRect(item))
    assert_shown_literally(item.toolTip(COL_SESSION), evil, secret)
    assert_shown_literally(item.toolTip(COL_WHAT), f"Bash: echo {evil}", secret)

    model = window.ui.sessionsView.model()
    assert model.index(0, COL_NAME).data() == evil
    assert model.index(0, COL_CWD).data() == os.path.basename(f"/work/{evil}")
    assert_shown_literally(model.index(0, COL_CWD).data(Qt.ItemDataRole.ToolTipRole),
                           f"/work/{evil}", secret)
    tip = model.index(0, COL_NAME).data(Qt.ItemDataRole.ToolTipRole)
    shown, loads = render_like_qt(tip)
    assert loads == [] and shown.startswith(evil + "\nFolder: /work/" + evil)

    details = window.ui.sessionDetails
    assert_shown_literally(details.toolTip(), f"/work/{evil}", secret)
    for label in (window.ui.sessionTitle, details):
        assert label.textFormat() == Qt.TextFormat.PlainText
    assert window.ui.sessionTitle.text() == evil


def test_rules_view_shows_rule_text_as_text(window: MainWindow, secret: Path) -> None:
    info = make_session("rules", "/work/rules")
    window.set_sessions([info])
    rule = SessionRule(session_id=info.session_id, behavior=RuleBehavior.ALLOW,
                       rule=RuleValue.parse(f"Bash(echo <img src={secret}>:*)"))
    window.set_rules(info.session_id, [rule])
    item = window.ui.rulesView.item_for(rule.rule_id)
    assert item is not None
    assert_shown_literally(item.toolTip(COL_RULE), str(rule.rule), secret)
    button = window.ui.rulesView.revoke_button(rule.rule_id)
    assert button is not None
    assert_shown_literally(button.toolTip(),
                           f"Stop {rule.rule} from answering for this session", secret)


def test_every_label_and_tooltip_of_the_window_is_safe(window: MainWindow,
                                                       secret: Path) -> None:
    evil = attack(secret)
    info = make_session(evil, f"/tmp/{evil}")
    window.set_sessions([info])
    window.set_pending([ApprovalRequest(session_id=info.session_id, session_name=evil,
                                        backend=info.backend, tool_name="Bash",
                                        tool_input={"command": evil})])
    assert_widgets_safe(window, secret)


def assert_widgets_safe(root: QWidget, secret: Path) -> None:
    """No label that shows the secret's path sniffs rich text; no tooltip loads anything."""
    for widget in [root, *root.findChildren(QWidget)]:
        if widget.toolTip():
            assert render_like_qt(widget.toolTip())[1] == []
        if isinstance(widget, QLabel) and str(secret) in widget.text():
            assert widget.textFormat() == Qt.TextFormat.PlainText, widget.objectName()


def test_decision_dialogs_show_agent_text_as_plain_text(open_dialog, secret: Path) -> None:  # type: ignore[no-untyped-def]
    from qoder_desktop.ui.dialogs import ApprovalDialog, PlanDialog, QuestionDialog

    evil = attack(secret)
    common = {"session_id": "s", "session_name": evil, "backend": Backend.CLAUDE,
              "title": evil, "description": evil, "decision_reason": evil}
    dialogs = [
        ApprovalDialog(ApprovalRequest(tool_name="Bash", tool_input={
            "command": evil, "description": evil}, **common)),
        PlanDialog(ApprovalRequest(tool_name="ExitPlanMode",
                                   tool_input={"plan": f"# Plan\n{evil}"}, **common)),
        QuestionDialog(ApprovalRequest(tool_name="AskUserQuestion", tool_input={
            "questions": [{"question": evil, "header": evil, "multiSelect": False,
                           "options": [{"label": evil, "description": evil},
                                       {"label": "b", "description": "c"}]}]}, **common)),
    ]
    for dialog in dialogs:
        shown, _ = open_dialog(dialog, arm=False)
        assert_widgets_safe(shown, secret)


def test_tray_menu_and_notifications_keep_markup_as_text(qtbot, secret: Path) -> None:  # type: ignore[no-untyped-def]
    evil = attack(secret)
    request = ApprovalRequest(session_id="s", session_name="web", backend=Backend.CLAUDE,
                              tool_name="Bash", tool_input={"command": f"echo {evil}"})
    tray = Tray()
    try:
        tray.set_pending([request])
        texts = [action.text() for action in tray.menu().actions()]
        assert any("echo <b>x</b><img src=" in text for text in texts)
        assert render_like_qt(tray.tooltip())[1] == []
        # A remote host's state (its name, ssh's own words) in the tooltip and menu.
        tray.set_remote_hosts([f"{evil}: reconnecting"])
        texts = [action.text() for action in tray.menu().actions()]
        assert any(text.startswith("<b>x</b><img src=") for text in texts)
        shown, loaded = render_like_qt(tray.tooltip())
        assert loaded == [] and shown.endswith(f"{evil}: reconnecting")
    finally:
        tray.dispose()
    note = format_notification(request)
    body = notification_text(note.body, platform="linux")
    assert "<" not in body and "&lt;img src=" in body
    assert notification_text(note.body, platform="win32") == note.body


def test_a_bidi_override_cannot_reorder_a_queue_row_or_notification() -> None:
    from qoder_desktop.ui.summaries import request_summary

    request = ApprovalRequest(session_id="s", session_name="web", backend=Backend.CLAUDE,
                              tool_name="Bash",
                              tool_input={"command": "\u202erm -rf ~ ; \u202c echo 'build ok'"})
    for text in (request_summary(request), format_notification(request).body):
        assert "\u202e" not in text and "\u202c" not in text
        assert "⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩rm -rf ~" in text
