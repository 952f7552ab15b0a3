"""The question dialog, driven by real key presses and clicks (offscreen)."""

from __future__ import annotations

import os

import pytest
from helpers.keys import press
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QCheckBox, QLabel, QRadioButton

from qoder_desktop.domain.models import DecisionKind
from qoder_desktop.ui.dialogs import DialogBuildError, QuestionDialog, dialog_for
from qoder_desktop.ui.dialogs.question import CANCEL_MESSAGE

CTRL = Qt.KeyboardModifier.ControlModifier
LAYOUT = "Which layout should the settings page use?"
PLATFORMS = "Which platforms must it support?"


def _input(preview_a: str | None = "## Sidebar\n\n- fast", preview_b: str | None = None):
    return {"questions": [
        {"question": LAYOUT, "header": "Layout", "multiSelect": False, "options": [
            {"label": "Sidebar", "description": "Sections on the left", "preview": preview_a},
            {"label": "Tabs & more", "description": "<b>tabs</b>",
             "preview": preview_b or "<h3>Tabs</h3><p>One <b>tab</b> each</p>"},
            {"label": "Single page", "description": "One long page"}]},
        {"question": PLATFORMS, "header": "Platforms", "multiSelect": True, "options": [
            {"label": "Linux"}, {"label": "macOS"}, {"label": "Windows"}]},
    ]}


@pytest.fixture
def question(make_request):
    def build(tool_input=None, **fields):
        return make_request("AskUserQuestion", tool_input or _input(), session_name="design",
                            **fields)
    return build


def click(qtbot, button):
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


def test_layout_title_and_plain_text(open_dialog, question):
    dialog, _ = open_dialog(QuestionDialog(question()))
    assert dialog.windowTitle() == "Question — design"
    layout, platforms = dialog.boxes
    assert layout.title() == "▶ Layout" and platforms.title() == "Platforms"
    assert all(isinstance(b, QRadioButton) for b, _ in layout.option_buttons)
    assert all(isinstance(b, QCheckBox) for b, _ in platforms.option_buttons)
    assert layout.option_buttons[1][0].text() == "2  ·  Tabs && more"
    assert layout.other_edit.isVisible() and platforms.other_edit.isVisible()
    labels = [label.text() for label in dialog.findChildren(QLabel)]
    assert "<b>tabs</b>" in labels and LAYOUT in labels
    for label in dialog.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()


def test_focus_starts_on_first_option_not_submit(open_dialog, question):
    dialog, _ = open_dialog(QuestionDialog(question()))
    assert QApplication.focusWidget() is dialog.boxes[0].option_buttons[0][0]
    assert not dialog.ui.submitButton.isEnabled()


def test_submit_needs_every_answer_then_encodes(open_dialog, qtbot, question):
    dialog, decisions = open_dialog(QuestionDialog(question()))
    layout, platforms = dialog.boxes
    press(dialog, Qt.Key.Key_2)
    assert layout.option_buttons[1][0].isChecked()
    assert not dialog.ui.submitButton.isEnabled()
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions == []
    click(qtbot, platforms.option_buttons[0][0])
    press(dialog, Qt.Key.Key_3)  # the current question is now Platforms
    assert [b.isChecked() for b, _ in platforms.option_buttons] == [True, False, True]
    assert dialog.ui.submitButton.isEnabled()
    press(dialog, Qt.Key.Key_Return, CTRL)
    (decision,) = decisions
    assert decision.kind is DecisionKind.ALLOW_ONCE
    assert decision.final_input["answers"] == {LAYOUT: "Tabs & more",
                                               PLATFORMS: "Linux, Windows"}
    assert decision.final_input["questions"] == _input()["questions"]
    assert decision.answer_labels == {LAYOUT: ("Tabs & more",),
                                      PLATFORMS: ("Linux", "Windows")}


def test_the_current_question_is_marked_and_named_in_the_hint(open_dialog, qtbot, question):
    dialog, _ = open_dialog(QuestionDialog(question()))
    layout, platforms = dialog.boxes
    assert layout.is_current() and not platforms.is_current()
    assert "Keys 1–3 choose an option of “Layout”, 0 picks Other" in dialog.ui.keysHint.text()
    assert dialog.ui.keysHint.wordWrap()  # a long hint wraps instead of being cut off
    click(qtbot, platforms.option_buttons[0][0])
    assert platforms.is_current() and not layout.is_current()
    assert platforms.title() == "▶ Platforms" and layout.title() == "Layout"
    assert "of “Platforms”" in dialog.ui.keysHint.text()
    press(dialog, Qt.Key.Key_2)
    assert [b.isChecked() for b, _ in platforms.option_buttons] == [True, True, False]
    assert not any(b.isChecked() for b, _ in layout.option_buttons)


def test_key_0_picks_other_and_the_digits_then_type(open_dialog, qtbot, question):
    dialog, decisions = open_dialog(QuestionDialog(question()))
    layout, platforms = dialog.boxes
    assert layout.other_button.text() == "0  ·  Other:"
    press(dialog, Qt.Key.Key_2)
    press(dialog, Qt.Key.Key_0)
    assert layout.other_button.isChecked() and not layout.option_buttons[1][0].isChecked()
    assert QApplication.focusWidget() is layout.other_edit
    qtbot.keyClicks(layout.other_edit, "Grid 2")
    assert layout.other_edit.text() == "Grid 2"
    click(qtbot, platforms.option_buttons[0][0])
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions[0].final_input["answers"] == {LAYOUT: "Grid 2", PLATFORMS: "Linux"}


def test_preview_names_its_option_and_follows_the_focus_to_other(open_dialog, qtbot,
                                                                question):
    dialog, _ = open_dialog(QuestionDialog(question()))
    layout = dialog.boxes[0]
    caption, browser = dialog.ui.previewCaption, dialog.preview.browser
    assert caption.text() == "Preview — Sidebar"
    press(dialog, Qt.Key.Key_2)
    assert caption.text() == "Preview — Tabs & more" and "One tab each" in browser.toPlainText()
    click(qtbot, layout.other_button)
    assert caption.text() == "Preview — Other (your own answer)"
    assert "One tab each" not in browser.toPlainText()
    assert "no preview" in browser.toPlainText()
    layout.option_buttons[0][0].setFocus()
    qtbot.waitUntil(lambda: caption.text() == "Preview — Sidebar")
    assert "Sidebar" in browser.toPlainText()


def test_other_answers(open_dialog, qtbot, question):
    dialog, decisions = open_dialog(QuestionDialog(question()))
    layout, platforms = dialog.boxes
    press(dialog, Qt.Key.Key_1)
    layout.other_edit.setFocus()
    qtbot.keyClicks(layout.other_edit, "Two panes 1")
    assert layout.other_button.isChecked()
    assert not layout.option_buttons[0][0].isChecked()
    assert layout.other_edit.text() == "Two panes 1"  # digits type, they do not choose
    click(qtbot, platforms.option_buttons[1][0])
    platforms.other_edit.setFocus()
    qtbot.keyClicks(platforms.other_edit, "FreeBSD")
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions[0].final_input["answers"] == {LAYOUT: "Two panes 1",
                                                   PLATFORMS: "macOS, FreeBSD"}


def test_cancel_is_a_deny_with_a_reason(open_dialog, question):
    dialog, decisions = open_dialog(QuestionDialog(question()))
    press(dialog, Qt.Key.Key_1)
    press(dialog, Qt.Key.Key_Escape)
    assert [(d.kind, d.message) for d in decisions] == [(DecisionKind.DENY, CANCEL_MESSAGE)]
    assert decisions[0].final_input is None


def test_cancel_button(open_dialog, qtbot, question):
    dialog, decisions = open_dialog(QuestionDialog(question()))
    qtbot.mouseClick(dialog.ui.cancelButton, Qt.MouseButton.LeftButton)
    assert decisions[0].kind is DecisionKind.DENY


@pytest.mark.arming
def test_arming_delay_and_exactly_once(open_dialog, qtbot, question):
    dialog, decisions = open_dialog(QuestionDialog(question()), arm=False)
    press(dialog, Qt.Key.Key_1)
    press(dialog, Qt.Key.Key_Escape)
    assert not any(b.isChecked() for b, _ in dialog.boxes[0].option_buttons)
    assert decisions == []
    qtbot.waitUntil(dialog.is_armed, timeout=2000)
    press(dialog, Qt.Key.Key_1)
    click(qtbot, dialog.boxes[1].option_buttons[2][0])
    press(dialog, Qt.Key.Key_Return, CTRL)
    press(dialog, Qt.Key.Key_Return, CTRL)
    press(dialog, Qt.Key.Key_Escape)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]


def test_preview_follows_focus_and_selection(open_dialog, qtbot, question):
    dialog, _ = open_dialog(QuestionDialog(question()))
    browser = dialog.preview.browser
    assert dialog.ui.previewContainer.isVisible()
    assert "Sidebar" in browser.toPlainText() and browser.last_preview.kind == "markdown"
    press(dialog, Qt.Key.Key_2)
    assert "One tab each" in browser.toPlainText() and browser.last_preview.kind == "html"
    press(dialog, Qt.Key.Key_3)
    assert "No preview for Single page" in browser.toPlainText()


def test_preview_on_hover(open_dialog, qtbot, question):
    dialog, _ = open_dialog(QuestionDialog(question()))
    tabs = dialog.boxes[0].option_buttons[1][0]
    point = QPointF(2, 2)
    QApplication.sendEvent(tabs, QEnterEvent(point, point, point))
    assert "One tab each" in dialog.preview.browser.toPlainText()


def _count_renders(dialog: QuestionDialog) -> list[str]:
    rendered: list[str] = []
    show_preview = dialog.preview.show_preview

    def spy(text, kind=None):  # type: ignore[no-untyped-def]
        rendered.append(text)
        return show_preview(text, kind)

    dialog.preview.show_preview = spy  # type: ignore[method-assign]
    return rendered


def test_previews_render_lazily_and_once_per_pointing(open_dialog, qtbot, question):
    data = _input(preview_a="## A", preview_b="## B")
    data["questions"][0]["options"][2]["preview"] = "## C"
    dialog = QuestionDialog(question(data))
    rendered = _count_renders(dialog)
    open_dialog(dialog)
    assert rendered == ["## A"]  # only the focused option's preview; none up front
    buttons = [button for button, _option in dialog.boxes[0].option_buttons]
    buttons[1].setFocus()  # a focus-in event and an application focus change
    qtbot.waitUntil(lambda: len(rendered) >= 2)
    assert rendered == ["## A", "## B"]
    point = QPointF(2, 2)
    QApplication.sendEvent(buttons[1], QEnterEvent(point, point, point))
    press(dialog, Qt.Key.Key_2)
    assert rendered == ["## A", "## B"]  # hovering or choosing what is shown: no re-render
    press(dialog, Qt.Key.Key_3)
    press(dialog, Qt.Key.Key_1)
    assert rendered == ["## A", "## B", "## C", "## A"]
    assert "A" in dialog.preview.browser.toPlainText()


def test_no_preview_column_without_previews(open_dialog, question):
    data = _input(preview_a=None)
    data["questions"][0]["options"][1].pop("preview")
    dialog, _ = open_dialog(QuestionDialog(question(data)))
    assert not dialog.ui.previewContainer.isVisible()


def test_hostile_preview_loads_nothing(open_dialog, question, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    dialog, _ = open_dialog(QuestionDialog(question(_input(
        preview_a=f"![x]({fifo})", preview_b=f"<p>hi</p><img src='{fifo}'>"))))
    press(dialog, Qt.Key.Key_2)
    dialog.grab()
    assert "hi" in dialog.preview.browser.toPlainText()
    with pytest.raises(OSError) as info:
        os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    assert info.value.errno == 6


def test_withdraw(open_dialog, qtbot, question):
    dialog, decisions = open_dialog(QuestionDialog(question()))
    press(dialog, Qt.Key.Key_1)
    click(qtbot, dialog.boxes[1].option_buttons[0][0])
    dialog.withdraw()
    assert not dialog.isVisible()
    dialog.ui.submitButton.click()
    dialog.submit()
    dialog.close()
    assert decisions == []


@pytest.mark.parametrize("bad", [
    {"questions": []},
    {"questions": [{"question": "Q?", "header": "H", "options": [{"label": "only"}]}]},
    {"questions": [{"question": "Q?", "options": [{"label": "a"}, {"label": "b"}]}],
     "answers": {"Q?": "a"}},
])
def test_malformed_input_fails_closed(question, bad):
    with pytest.raises(DialogBuildError, match="could not show"):
        dialog_for(question(bad))


def test_factory_builds_question_dialog(qtbot, question):
    dialog = dialog_for(question())
    qtbot.addWidget(dialog)
    assert isinstance(dialog, QuestionDialog)


def _plain_questions():
    return {"questions": [
        {"question": "Which database?", "header": "Database", "multiSelect": False,
         "options": [{"label": "SQLite"}, {"label": "Postgres"}]},
        {"question": "Which test runner?", "header": "Tests", "multiSelect": False,
         "options": [{"label": "pytest"}, {"label": "unittest"}]},
        {"question": "Which linters?", "header": "Linters", "multiSelect": True,
         "options": [{"label": "ruff"}, {"label": "mypy"}]},
    ]}


def test_a_single_select_answer_moves_on_to_the_next_unanswered_question(
        open_dialog, qtbot, question):
    dialog, decisions = open_dialog(QuestionDialog(question(_plain_questions())))
    database, tests, linters = dialog.boxes
    assert "PgDn / PgUp: next / previous question" in dialog.ui.keysHint.text()
    press(dialog, Qt.Key.Key_2)
    assert database.option_buttons[1][0].isChecked()
    assert tests.is_current() and tests.title() == "▶ Tests"
    assert "of “Tests”" in dialog.ui.keysHint.text()
    assert QApplication.focusWidget() is tests.option_buttons[0][0]
    press(dialog, Qt.Key.Key_1)
    assert tests.option_buttons[0][0].isChecked() and linters.is_current()
    press(dialog, Qt.Key.Key_1)  # multi-select: stays to tick more
    press(dialog, Qt.Key.Key_2)
    assert linters.is_current() and linters.answer().labels == ("ruff", "mypy")
    press(dialog, Qt.Key.Key_PageUp)
    press(dialog, Qt.Key.Key_PageUp)
    assert database.is_current()
    assert QApplication.focusWidget() is database.option_buttons[1][0]  # the chosen one
    press(dialog, Qt.Key.Key_1)  # changing an answer: every other one is answered, stay
    assert database.is_current() and database.option_buttons[0][0].isChecked()
    press(dialog, Qt.Key.Key_PageDown)
    assert tests.is_current()
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions[0].final_input["answers"] == {
        "Which database?": "SQLite", "Which test runner?": "pytest",
        "Which linters?": "ruff, mypy"}


def test_digits_stay_on_a_question_with_previews_to_compare_them(open_dialog, question):
    dialog, _ = open_dialog(QuestionDialog(question()))
    layout, _platforms = dialog.boxes
    press(dialog, Qt.Key.Key_1)
    press(dialog, Qt.Key.Key_2)
    assert layout.is_current() and layout.option_buttons[1][0].isChecked()
    assert dialog.ui.previewCaption.text() == "Preview — Tabs & more"
    press(dialog, Qt.Key.Key_PageDown)
    assert dialog.boxes[1].is_current()
