"""The question dialog: answer the agent's AskUserQuestion with options or own text.

Each question shows its header, its text and its options (radio buttons, or check boxes
for multi-select) with their descriptions, plus an "Other" answer that is always there.
The digit keys answer the *current* question (the one holding the focus; its title is
marked and the hint line names it): 1–4 choose option N, 0 picks "Other" and puts the
cursor in its text field. Choosing an option of a single-select question moves on to the
next question still without an answer (unless it has previews: there the digits compare
them); Page Down / Page Up move between questions.

The preview of the hovered, focused or selected option is rendered beside the options
in a `PreviewPane`, captioned with the option's label; on "Other" it says that answer
has no preview. It renders lazily: only when an option is pointed at, and not again
while it is the one shown (focusing an option reports it twice: its focus-in event and
the application's focus change; showing the dialog, three times). Preview kind: a
preview whose text starts with `<` (after leading whitespace) is HTML, anything else
markdown (`preview_sanitize.sniff_kind`).

Submitting sends the original input with `answers` added (`questions.encode_answers`);
cancelling is a deny with a reason, never an empty answer.
"""

from __future__ import annotations

import contextlib
from functools import partial

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QApplication,
    QWidget,
)

from qoder_desktop.approval.questions import (
    QuestionAnswer,
    QuestionInputError,
    QuestionOption,
    QuestionSet,
    answer_labels,
    encode_answers,
    parse_questions,
)
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.dialogs.approval import who_text
from qoder_desktop.ui.dialogs.base import BaseDecisionDialog
from qoder_desktop.ui.dialogs.question_box import OTHER_KEY, QuestionBox
from qoder_desktop.ui.forms.ui_question_dialog import Ui_QuestionDialog
from qoder_desktop.ui.plain_text import set_plain
from qoder_desktop.ui.widgets.preview import PreviewPane, plain_label

CANCEL_MESSAGE = "The user declined to answer the question."
NEXT_QUESTION_KEY = "PgDown"
PREVIOUS_QUESTION_KEY = "PgUp"
"""The keys that move to the next and the previous question (named in the hint)."""


class QuestionDialog(BaseDecisionDialog):
    """Answer the agent's questions, with option previews beside them.

    Keys: Ctrl+Return submit; Escape cancel (a deny with a reason); 1–4 choose option N
    of the current question, 0 its "Other" answer (digits type text while an "Other"
    field has the focus).

    Raises:
        QuestionInputError: when the input is malformed (the caller should fail closed).

    Signals:
        decided(object): allow with the encoded answers, or a deny when cancelled.
        shown(): the dialog was shown.
    """

    def __init__(self, request: ApprovalRequest | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_QuestionDialog()
        self.ui.setupUi(self)
        self.setWindowTitle("")  # a spare's (unmapped) window is nameless until `load`
        ui = self.ui
        self.questions = QuestionSet.model_construct(questions=())
        """The questions shown (none until `load`)."""
        self.boxes: list[QuestionBox] = []
        self.error = plain_label()
        self.error.setObjectName("questionError")
        self.error.hide()
        ui.dialogLayout.insertWidget(ui.dialogLayout.indexOf(ui.keysHint), self.error)
        self.preview = PreviewPane(ui.previewContainer)
        ui.previewLayout.addWidget(self.preview, 1)
        self.preview.show_message("Point at an option to see its preview.")
        self.shown_option: QuestionOption | None = None
        """The option whose preview (or "no preview" note) the pane shows now."""
        self._shows_other = False
        self.current = 0

        self.guard(ui.submitButton, self.submit, self.all_answered, approves=True)
        self.guard(ui.cancelButton, self.cancel)
        self.add_shortcut(["Ctrl+Return", "Ctrl+Enter"], self.submit, approves=True)
        for number in range(1, 5):
            self.add_shortcut([str(number)], partial(self.choose, number))
        self.add_shortcut([OTHER_KEY], self.choose_other)
        self.add_shortcut([NEXT_QUESTION_KEY], partial(self.step_question, 1))
        self.add_shortcut([PREVIOUS_QUESTION_KEY], partial(self.step_question, -1))
        if request is not None:
            self.load(request)

    def _fill(self, request: ApprovalRequest) -> None:
        """Show every question with its options; raises `QuestionInputError` on a
        malformed input before any widget changes."""
        self.questions = parse_questions(request.tool_input)
        ui = self.ui
        self.setWindowTitle(make_visible(f"Question — {request.session_name}"
                                         if request.session_name else "Question"))
        count = len(self.questions.questions)
        ui.titleLabel.setText("The agent asks you a question" if count == 1
                              else f"The agent asks you {count} questions")
        set_plain(ui.whoLabel, who_text(request))
        for number, question in enumerate(self.questions.questions, start=1):
            box = QuestionBox(question, number, ui.questionsContainer)
            box.changed.connect(self._on_answer_changed)
            box.option_pointed.connect(self._show_option)
            box.hover_ended.connect(self._show_current)
            ui.questionsLayout.addWidget(box)
            self.boxes.append(box)
        ui.questionsLayout.addStretch(1)
        has_previews = any(q.has_previews for q in self.questions.questions)
        ui.previewContainer.setVisible(has_previews)
        if has_previews:
            ui.contentSplitter.setSizes([420, 420])
        else:
            self.resize(600, self.height())
        self.boxes[0].set_current(True)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)
        self._on_answer_changed()

    @Slot()
    def _on_answer_changed(self) -> None:
        self.refresh_buttons()
        waiting = sum(not box.is_answered() for box in self.boxes)
        if waiting:
            status = ("1 question still needs an answer" if waiting == 1
                      else f"{waiting} questions still need an answer")
        else:
            status = "Ready to submit"
        moving = ("  ·  PgDn / PgUp: next / previous question" if len(self.boxes) > 1
                  else "")
        self.ui.keysHint.setText(f"{status}  ·  {self.keys_text()}{moving}  ·  "
                                 "Ctrl+Return submits  ·  Esc cancels")

    def keys_text(self) -> str:
        """What the digit keys do now: which question they answer."""
        box = self.boxes[self.current]
        last = len(box.option_buttons)
        keys = "Key 1" if last == 1 else f"Keys 1–{last}"
        where = f" of “{make_visible(box.header)}”" if len(self.boxes) > 1 else ""
        return f"{keys} choose an option{where}, {OTHER_KEY} picks Other"

    def all_answered(self) -> bool:
        """True when every question has an answer."""
        return all(box.is_answered() for box in self.boxes)

    def answers(self) -> dict[str, QuestionAnswer]:
        """The current answer per question text."""
        return {box.question.question: box.answer() for box in self.boxes}

    def choose(self, number: int) -> None:
        """Choose option `number` of the current question (keys 1–4); a single-select
        answer moves on to the next question that still needs one, unless the question
        has previews (there the digits compare them; Page Down moves on)."""
        box = self.boxes[self.current]
        box.choose(number)
        question = box.question
        if question.multi_select or question.has_previews or not box.is_answered():
            return
        count = len(self.boxes)
        following = [(self.current + step) % count for step in range(1, count)]
        waiting = next((i for i in following if not self.boxes[i].is_answered()), None)
        if waiting is not None:
            self.focus_question(waiting)

    def step_question(self, step: int) -> None:
        """Move to the next (1) or previous (-1) question (Page Down / Page Up)."""
        index = self.current + step
        if 0 <= index < len(self.boxes):
            self.focus_question(index)

    def focus_question(self, index: int) -> None:
        """Make question `index` current: focus its chosen (or first) option."""
        box = self.boxes[index]
        target = next((b for b, _ in box.option_buttons if b.isChecked()),
                      box.first_button())
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.ui.questionsScroll.ensureWidgetVisible(box, 0, 0)
        self._set_current(index)
        self._show_current()

    def choose_other(self) -> None:
        """Pick "Other" in the current question and put the cursor in its field (key 0)."""
        self.boxes[self.current].choose_other()

    def submit(self) -> None:
        """Send the answers (only when every question is answered and they encode)."""
        if not self.all_answered():
            return
        answers = self.answers()
        try:
            final = encode_answers(self.request.tool_input, self.questions, answers)
        except QuestionInputError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.emit_decision(Decision.allow_once(final, answer_labels=answer_labels(answers)))

    def cancel(self) -> None:
        """Decline to answer: a deny with a reason."""
        self.emit_decision(self.escape_decision())

    def escape_decision(self) -> Decision:
        """Escape, Cancel and closing the window decline to answer."""
        return Decision.deny(CANCEL_MESSAGE)

    def focus_safe_choice(self) -> None:
        """Focus the first option of the first question (choosing is not submitting)."""
        self.boxes[0].first_button().setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot(QWidget, QWidget)
    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new is None or self.is_finished():
            return
        for index, box in enumerate(self.boxes):
            if box.isAncestorOf(new):
                self._set_current(index)
                self._show_current()
                return

    def _set_current(self, index: int) -> None:
        if index == self.current:
            return
        self.boxes[self.current].set_current(False)
        self.current = index
        self.boxes[index].set_current(True)
        self._on_answer_changed()

    @Slot(object)
    def _show_option(self, option: QuestionOption | None) -> None:
        """Show `option`'s preview, captioned with its label; None is "Other"."""
        if option is None:
            if not self._shows_other:
                self._shows_other, self.shown_option = True, None
                self.ui.previewCaption.setText("Preview — Other (your own answer)")
                self.preview.show_message("Your own answer has no preview.")
            return
        if option is self.shown_option and not self._shows_other:
            return  # already shown: a big preview costs tens of milliseconds to lay out
        self._shows_other, self.shown_option = False, option
        label = make_visible(option.label)
        self.ui.previewCaption.setText(f"Preview — {label}")
        if not option.preview:
            self.preview.show_message(f"No preview for {label}.")
            return
        self.preview.show_preview(option.preview)

    @Slot()
    def _show_current(self) -> None:
        box = self.boxes[self.current]
        focused = next((o for b, o in box.option_buttons if b.hasFocus()), None)
        if focused is None and box.other_pointed():
            self._show_option(None)
            return
        option = focused or box.selected_option()
        if option is not None:
            self._show_option(option)

    def done(self, result: int) -> None:
        """Stop following focus once closed."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            with contextlib.suppress(RuntimeError, TypeError):
                app.focusChanged.disconnect(self._on_focus_changed)
        super().done(result)
