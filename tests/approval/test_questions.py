"""AskUserQuestion validation and the exact answer encoding the CLI expects."""

from __future__ import annotations

import json

import pytest

from qoder_desktop.approval.questions import (
    QuestionAnswer,
    QuestionInputError,
    answer_labels,
    encode_answers,
    parse_questions,
)


def _input(*questions: dict) -> dict:
    return {"questions": list(questions)}


def _question(text: str, labels: list[str], multi: bool = False, **extra) -> dict:
    return {
        "question": text,
        "header": "Pick",
        "options": [{"label": label, "description": f"about {label}"} for label in labels],
        "multiSelect": multi,
        **extra,
    }


LAYOUT = _question("Which layout should the page use?", ["Grid", "List", "Cards"])
EXTRAS = _question("Which extras do you want?", ["Dark mode", "Search, with filters", "Export"],
                   multi=True)


def test_single_select_answer_is_the_label_keyed_by_full_question_text() -> None:
    original = _input(LAYOUT)
    questions = parse_questions(original)
    updated = encode_answers(original, questions,
                             {LAYOUT["question"]: QuestionAnswer(labels=("List",))})
    assert updated["answers"] == {"Which layout should the page use?": "List"}
    assert updated["questions"] == original["questions"]
    assert set(updated) == {"questions", "answers"}


def test_multi_select_labels_are_joined_with_comma_space_and_ledger_keeps_them_apart() -> None:
    original = _input(LAYOUT, EXTRAS)
    questions = parse_questions(original)
    answers = {
        LAYOUT["question"]: QuestionAnswer(labels=("Grid",)),
        EXTRAS["question"]: QuestionAnswer(labels=("Dark mode", "Search, with filters")),
    }
    updated = encode_answers(original, questions, answers)
    assert updated["answers"][EXTRAS["question"]] == "Dark mode, Search, with filters"
    labels = answer_labels(answers)
    assert labels[EXTRAS["question"]] == ("Dark mode", "Search, with filters")
    # The structured form survives a JSON round trip unambiguously.
    assert json.loads(json.dumps(labels))[EXTRAS["question"]] == ["Dark mode",
                                                                 "Search, with filters"]


def test_free_text_answer_is_sent_as_typed() -> None:
    original = _input(LAYOUT)
    updated = encode_answers(original, parse_questions(original),
                             {LAYOUT["question"]: QuestionAnswer(other_text="A masonry wall")})
    assert updated["answers"] == {LAYOUT["question"]: "A masonry wall"}


def test_original_input_is_echoed_unchanged_including_unknown_fields() -> None:
    original = _input(_question("Ship it?", ["Yes", "No"], metadata={"k": [1, 2]}))
    original["source"] = "agent"
    updated = encode_answers(original, parse_questions(original),
                             {"Ship it?": QuestionAnswer(labels=("Yes",))})
    assert updated["questions"] is original["questions"]
    assert updated["source"] == "agent"


@pytest.mark.parametrize(
    ("bad_input", "expected"),
    [
        ({"questions": []}, "questions: needs 1 to 4 questions, got 0"),
        (_input(*[_question(f"Q{i}?", ["a", "b"]) for i in range(5)]),
         "needs 1 to 4 questions, got 5"),
        (_input(_question("Only one?", ["a"])), "questions.0.options: needs 2 to 4 options, got 1"),
        (_input(_question("Too many?", ["a", "b", "c", "d", "e"])),
         "needs 2 to 4 options, got 5"),
        (_input(_question("Dupes?", ["a", "a"])), "option labels repeat: 'a'"),
        (_input(_question("Same?", ["a", "b"]), _question("Same?", ["c", "d"])),
         "same text"),
        ({"questions": "not a list"}, "questions"),
        ({}, "questions: Field required"),
        (_input({"header": "x", "options": [{"label": "a"}, {"label": "b"}]}),
         "questions.0.question: Field required"),
        (_input(_question("Blank label?", ["a", "  "])), "option label must not be blank"),
        ({"questions": [LAYOUT], "answers": {"x": "y"}}, "pre-filled answers"),
    ],
)
def test_malformed_input_is_refused_with_what_is_wrong(bad_input: dict, expected: str) -> None:
    with pytest.raises(QuestionInputError) as error:
        parse_questions(bad_input)
    assert expected in str(error.value)


def test_input_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(QuestionInputError, match="must be an object"):
        parse_questions(["questions"])  # type: ignore[arg-type]


def test_unanswered_question_is_refused_never_sent_empty() -> None:
    original = _input(LAYOUT, EXTRAS)
    with pytest.raises(QuestionInputError, match="no answer for"):
        encode_answers(original, parse_questions(original),
                       {LAYOUT["question"]: QuestionAnswer(labels=("Grid",)),
                        EXTRAS["question"]: QuestionAnswer(other_text="   ")})


def test_single_select_refuses_two_labels_and_unknown_labels() -> None:
    original = _input(LAYOUT)
    questions = parse_questions(original)
    with pytest.raises(QuestionInputError, match="takes one answer"):
        encode_answers(original, questions,
                       {LAYOUT["question"]: QuestionAnswer(labels=("Grid", "List"))})
    with pytest.raises(QuestionInputError, match="unknown option 'Table'"):
        encode_answers(original, questions,
                       {LAYOUT["question"]: QuestionAnswer(labels=("Table",))})


def test_answer_for_a_question_not_asked_is_refused() -> None:
    original = _input(LAYOUT)
    with pytest.raises(QuestionInputError, match="not asked"):
        encode_answers(original, parse_questions(original),
                       {LAYOUT["question"]: QuestionAnswer(labels=("Grid",)),
                        "Invented?": QuestionAnswer(other_text="x")})


def test_overlong_free_text_is_refused() -> None:
    original = _input(LAYOUT)
    with pytest.raises(QuestionInputError, match="longer than 32768"):
        encode_answers(original, parse_questions(original),
                       {LAYOUT["question"]: QuestionAnswer(other_text="x" * 40_000)})
