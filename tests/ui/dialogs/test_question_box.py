"""One question of the question dialog, as the person answers it: a click or a digit
picks an option, typing in "Other" picks Other, multi-select gathers labels in option
order, and the current question's title is marked."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from qoder_desktop.approval.questions import Question, QuestionAnswer, QuestionOption
from qoder_desktop.ui.dialogs.question_box import CURRENT_MARK, QuestionBox

OPTIONS = (QuestionOption(label="Postgres", description="The production database"),
           QuestionOption(label="SQLite"),
           QuestionOption(label="DuckDB", description="For analytics"))


def box_for(qtbot: QtBot, *, multi: bool = False, header: str = "Database") -> QuestionBox:
    box = QuestionBox(Question(question="Which database?", header=header, options=OPTIONS,
                               multi_select=multi), 1)
    qtbot.addWidget(box)
    box.show()
    box.activateWindow()
    qtbot.waitActive(box)
    return box


def test_a_click_answers_with_that_option(qtbot: QtBot) -> None:
    box = box_for(qtbot)
    assert not box.is_answered()
    with qtbot.waitSignal(box.option_pointed) as pointed:
        button = box.option_buttons[1][0]
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton,
                         pos=QPoint(8, button.height() // 2))  # on its round indicator
    assert pointed.args == [OPTIONS[1]]
    assert box.answer() == QuestionAnswer(labels=("SQLite",))
    box.choose(3)
    assert box.answer() == QuestionAnswer(labels=("DuckDB",))
    assert box.selected_option() == OPTIONS[2]


def test_typing_in_other_picks_other_and_the_text_is_the_answer(qtbot: QtBot) -> None:
    box = box_for(qtbot)
    box.choose(1)
    with qtbot.waitSignal(box.changed):
        qtbot.keyClicks(box.other_edit, "MariaDB")
    assert box.other_button.isChecked()
    assert box.answer() == QuestionAnswer(other_text="MariaDB")
    assert box.other_pointed()


def test_other_ticked_without_text_is_no_answer(qtbot: QtBot) -> None:
    box = box_for(qtbot)
    box.choose_other()
    qtbot.waitUntil(box.other_edit.hasFocus)
    assert not box.is_answered()


def test_multi_select_gathers_labels_in_option_order_and_a_digit_toggles(qtbot: QtBot) -> None:
    box = box_for(qtbot, multi=True)
    box.choose(3)
    box.choose(1)
    box.choose_other()
    qtbot.keyClicks(box.other_edit, "and Redis")
    assert box.answer() == QuestionAnswer(labels=("Postgres", "DuckDB"), other_text="and Redis")
    box.choose(3)
    box.choose_other()
    assert box.answer() == QuestionAnswer(labels=("Postgres",))


def test_an_option_number_out_of_range_changes_nothing(qtbot: QtBot) -> None:
    box = box_for(qtbot)
    box.choose(4)
    box.choose(0)
    assert not box.is_answered()


def test_the_current_question_is_marked_in_its_title(qtbot: QtBot) -> None:
    box = box_for(qtbot)
    box.set_current(True)
    assert box.is_current() and box.title().startswith(CURRENT_MARK)
    box.set_current(False)
    assert not box.title().startswith(CURRENT_MARK)


def test_a_question_without_a_header_is_named_by_its_number(qtbot: QtBot) -> None:
    box = box_for(qtbot, header="")
    assert "Question 1" in box.title()
    assert box.first_button().accessibleName() == "Question 1, option 1: Postgres"
    assert box.first_button().accessibleDescription() == "The production database"
