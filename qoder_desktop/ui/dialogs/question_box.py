"""One question of the question dialog: header, text, options with descriptions, "Other".

The digit keys of the dialog answer the current box (`set_current` marks its title);
hovering or focusing an option reports it (`option_pointed`) so the dialog can show its
preview.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractButton,
    QButtonGroup,
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.approval.questions import Question, QuestionAnswer, QuestionOption
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.dialogs.base import button_text
from qoder_desktop.ui.widgets.preview import plain_label

OTHER_KEY = "0"
"""The digit that picks "Other" in the current question (1–4 pick the options)."""
CURRENT_MARK = "▶ "
"""Prefix of the current question's title: the one the digit keys answer."""


class QuestionBox(QGroupBox):
    """One question: header, text, options with descriptions, and "Other".

    Signals:
        changed(): the answer changed.
        option_pointed(object): an option (or None for "Other") was hovered, focused or
            selected; carries its `QuestionOption`.
        hover_ended(): the pointer left an option.
    """

    changed = Signal()
    option_pointed = Signal(object)
    hover_ended = Signal()

    def __init__(self, question: Question, number: int, parent: QWidget | None = None) -> None:
        self.header = question.header or f"Question {number}"
        super().__init__(button_text(self.header), parent)
        self.setObjectName(f"question{number}")
        self.question = question
        self._current = False
        layout = QVBoxLayout(self)
        layout.setSpacing(4)
        text = plain_label(make_visible(question.question))
        text.setObjectName("questionText")
        layout.addWidget(text)
        if question.multi_select:
            hint = plain_label("Choose one or more.")
            hint.setObjectName("optionDescription")
            layout.addWidget(hint)
        self.group = QButtonGroup(self)
        self.group.setExclusive(not question.multi_select)
        self.option_buttons: list[tuple[QAbstractButton, QuestionOption]] = []
        for index, option in enumerate(question.options, start=1):
            label = button_text(f"{index}  ·  {option.label}")
            button: QAbstractButton = (QCheckBox(label, self) if question.multi_select
                                       else QRadioButton(label, self))
            button.setObjectName(f"option{index}")
            button.setAccessibleName(f"Question {number}, option {index}: "
                                     f"{make_visible(option.label)}")
            button.setAccessibleDescription(make_visible(option.description)
                                            if option.description else
                                            f"Answer question {number} with this option")
            self.group.addButton(button)
            self.option_buttons.append((button, option))
            button.toggled.connect(lambda on, o=option: self._on_toggled(on, o))
            button.installEventFilter(self)
            layout.addWidget(button)
            if option.description:
                description = plain_label(make_visible(option.description))
                description.setObjectName("optionDescription")
                description.setContentsMargins(24, 0, 0, 2)
                layout.addWidget(description)
        row = QHBoxLayout()
        other_label = f"{OTHER_KEY}  ·  Other:"
        self.other_button: QAbstractButton = (QCheckBox(other_label, self)
                                              if question.multi_select
                                              else QRadioButton(other_label, self))
        self.other_button.setObjectName("otherButton")
        self.other_button.setAccessibleName(f"Question {number}, Other")
        self.other_button.setAccessibleDescription(
            f"Answer question {number} in your own words")
        self.group.addButton(self.other_button)
        self.other_edit = QLineEdit(self)
        self.other_edit.setObjectName("otherEdit")
        self.other_edit.setPlaceholderText("Type your own answer")
        self.other_edit.setAccessibleName(f"Question {number}, your own answer")
        self.other_edit.setAccessibleDescription("Typing here picks Other")
        self.other_edit.textEdited.connect(self._on_other_typed)
        self.other_edit.textChanged.connect(self.changed)
        self.other_button.toggled.connect(self.changed)
        self.other_button.toggled.connect(self._on_other_toggled)
        self.other_button.installEventFilter(self)
        self.other_edit.installEventFilter(self)
        row.addWidget(self.other_button)
        row.addWidget(self.other_edit, 1)
        layout.addLayout(row)

    def answer(self) -> QuestionAnswer:
        """What is chosen now (labels in option order, then the Other text if ticked)."""
        labels = tuple(option.label for button, option in self.option_buttons
                       if button.isChecked())
        other = self.other_edit.text() if self.other_button.isChecked() else ""
        return QuestionAnswer(labels=labels, other_text=other)

    def is_answered(self) -> bool:
        """True when the answer is not empty."""
        return not self.answer().is_empty

    def choose(self, number: int) -> None:
        """Choose option `number` (1-based): select it, or toggle it for multi-select."""
        if not 1 <= number <= len(self.option_buttons):
            return
        button, option = self.option_buttons[number - 1]
        button.setChecked(not button.isChecked() if self.question.multi_select else True)
        button.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.option_pointed.emit(option)

    def choose_other(self) -> None:
        """Pick "Other" (key 0; toggles it for multi-select) and focus its text field."""
        self.other_button.setChecked(not self.other_button.isChecked()
                                     if self.question.multi_select else True)
        self.other_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.option_pointed.emit(None)

    def is_current(self) -> bool:
        """True when the digit keys answer this question."""
        return self._current

    def set_current(self, current: bool) -> None:
        """Mark (or unmark) this question as the one the digit keys answer."""
        if current == self._current:
            return
        self._current = current
        self.setTitle(button_text((CURRENT_MARK if current else "") + self.header))
        self.setProperty("current", current)
        self.style().unpolish(self)
        self.style().polish(self)

    def other_pointed(self) -> bool:
        """True when "Other" has the focus, or is the single-select answer chosen."""
        if self.other_button.hasFocus() or self.other_edit.hasFocus():
            return True
        return not self.question.multi_select and self.other_button.isChecked()

    def selected_option(self) -> QuestionOption | None:
        """The first checked option, if any."""
        return next((o for b, o in self.option_buttons if b.isChecked()), None)

    def first_button(self) -> QAbstractButton:
        """The first option's button."""
        return self.option_buttons[0][0]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Report hovered and focused options (and "Other") for the preview."""
        other = watched is self.other_button or watched is self.other_edit
        option = next((o for b, o in self.option_buttons if b is watched), None)
        if option is not None or other:
            if event.type() in (QEvent.Type.Enter, QEvent.Type.FocusIn):
                self.option_pointed.emit(option)
            elif event.type() == QEvent.Type.Leave:
                self.hover_ended.emit()
        return super().eventFilter(watched, event)

    def _on_other_toggled(self, on: bool) -> None:
        if on:
            self.option_pointed.emit(None)

    def _on_toggled(self, on: bool, option: QuestionOption) -> None:
        if on:
            self.option_pointed.emit(option)
        self.changed.emit()

    def _on_other_typed(self, text: str) -> None:
        if text and not self.other_button.isChecked():
            self.other_button.setChecked(True)
