"""The `AskUserQuestion` tool: validated input and the exact answer encoding.

The answer goes back as an allow whose `updated_input` echoes the original input
unchanged and adds `answers`: key = the full question text, value = the chosen label,
labels joined with ", " for multi-select, or the user's own text. The CLI rejects any
other change to the input, so nothing else is added.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

MAX_ANSWER_CHARS = 32_768
"""The CLI refuses an answer string longer than this."""


class QuestionInputError(ValueError):
    """The agent's AskUserQuestion input is malformed; the message says what is wrong."""


def _check_count(value: Any, what: str, low: int, high: int) -> Any:
    """Refuse a list whose length is outside [low, high], saying how many there were."""
    if isinstance(value, list | tuple) and not low <= len(value) <= high:
        raise ValueError(f"needs {low} to {high} {what}, got {len(value)}")
    return value


class QuestionOption(BaseModel):
    """One option of a question, with an optional markdown or HTML preview."""

    model_config = ConfigDict(extra="allow", frozen=True)

    label: str = Field(min_length=1)
    description: str = ""
    preview: str | None = None

    @field_validator("label")
    @classmethod
    def _label_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("an option label must not be blank")
        return value


class Question(BaseModel):
    """One question: its text, a short header, 2–4 options, single or multi select."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    question: str = Field(min_length=1)
    header: str = ""
    options: tuple[QuestionOption, ...]
    multi_select: bool = Field(default=False, alias="multiSelect")

    @field_validator("options", mode="before")
    @classmethod
    def _two_to_four_options(cls, value: Any) -> Any:
        return _check_count(value, "options", 2, 4)

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question text must not be blank")
        return value

    @model_validator(mode="after")
    def _labels_unique(self) -> Question:
        labels = [option.label for option in self.options]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ValueError(f"option labels repeat: {', '.join(map(repr, duplicates))}")
        return self

    @property
    def has_previews(self) -> bool:
        """True when at least one option carries a preview."""
        return any(option.preview for option in self.options)


class QuestionSet(BaseModel):
    """The whole AskUserQuestion input: 1–4 questions with distinct texts."""

    model_config = ConfigDict(extra="allow", frozen=True)

    questions: tuple[Question, ...]

    @field_validator("questions", mode="before")
    @classmethod
    def _one_to_four_questions(cls, value: Any) -> Any:
        return _check_count(value, "questions", 1, 4)

    @model_validator(mode="after")
    def _texts_unique(self) -> QuestionSet:
        texts = [q.question for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("two questions have the same text; answers could not be told apart")
        return self


def parse_questions(tool_input: Mapping[str, Any]) -> QuestionSet:
    """Validate an AskUserQuestion input.

    Raises:
        QuestionInputError: naming each field that is wrong, e.g.
            "questions.0.options: List should have at least 2 items".
    """
    if not isinstance(tool_input, Mapping):
        raise QuestionInputError(
            f"AskUserQuestion input must be an object, got {type(tool_input).__name__}")
    if "answers" in tool_input:
        raise QuestionInputError(
            "AskUserQuestion input already contains answers; refusing pre-filled answers")
    try:
        return QuestionSet.model_validate(dict(tool_input))
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "input"
            message = error["msg"].removeprefix("Value error, ")
            problems.append(f"{where}: {message}")
        raise QuestionInputError("invalid AskUserQuestion input: " + "; ".join(problems)) from None


class QuestionAnswer(BaseModel):
    """What the user chose for one question: option labels and/or their own text."""

    model_config = ConfigDict(frozen=True)

    labels: tuple[str, ...] = ()
    other_text: str = ""

    @property
    def is_empty(self) -> bool:
        """True when nothing was chosen and nothing typed."""
        return not self.labels and not self.other_text.strip()

    def parts(self) -> tuple[str, ...]:
        """The chosen labels followed by the typed text, as the ledger keeps them."""
        other = self.other_text.strip()
        return (*self.labels, other) if other else self.labels


def encode_answers(
    original_input: Mapping[str, Any],
    questions: QuestionSet,
    answers: Mapping[str, QuestionAnswer],
) -> dict[str, Any]:
    """Build the `updated_input` for an answered AskUserQuestion.

    Args:
        original_input: the input exactly as the agent sent it; echoed unchanged.
        questions: the validated questions of that input.
        answers: the user's answer per question text.

    Raises:
        QuestionInputError: when a question is unanswered, a label is unknown, a
            single-select question got several labels, or an answer is too long.
    """
    encoded: dict[str, str] = {}
    for question in questions.questions:
        answer = answers.get(question.question)
        if answer is None or answer.is_empty:
            raise QuestionInputError(f"no answer for {question.question!r}")
        known = {option.label for option in question.options}
        unknown = [label for label in answer.labels if label not in known]
        if unknown:
            raise QuestionInputError(f"unknown option {unknown[0]!r} for {question.question!r}")
        if not question.multi_select and len(answer.parts()) > 1:
            raise QuestionInputError(f"{question.question!r} takes one answer")
        text = ", ".join(answer.parts())
        if len(text) > MAX_ANSWER_CHARS:
            raise QuestionInputError(
                f"the answer to {question.question!r} is longer than {MAX_ANSWER_CHARS} characters")
        encoded[question.question] = text
    extra = set(answers) - {q.question for q in questions.questions}
    if extra:
        raise QuestionInputError(f"answer for a question that was not asked: {sorted(extra)[0]!r}")
    updated = dict(original_input)
    updated["answers"] = encoded
    return updated


def answer_labels(answers: Mapping[str, QuestionAnswer]) -> dict[str, tuple[str, ...]]:
    """The structured answers for the ledger: unambiguous even when a label has ", "."""
    return {question: answer.parts() for question, answer in answers.items()}

