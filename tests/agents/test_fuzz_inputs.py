"""Fuzzing what agents send: AskUserQuestion inputs and tool inputs never crash or allow.

Malformed or oversized input gets a clear error (QuestionInputError, or a deny with a
message), never an unexpected exception and never an allow.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qoder_desktop.agents.claude import ClaudeSession
from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.approval.questions import (
    QuestionAnswer,
    QuestionInputError,
    encode_answers,
    parse_questions,
)
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    PermissionSuggestion,
    SessionInfo,
)
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=30,
)
LABEL = st.text(min_size=1, max_size=30).filter(lambda text: text.strip() != "")
OPTION = st.fixed_dictionaries(
    {"label": LABEL, "description": st.text(max_size=40)},
    optional={"preview": st.text(max_size=200), "extra": JSON},
)
QUESTION = st.fixed_dictionaries({
    "question": st.text(min_size=1, max_size=60),
    "header": st.text(max_size=20),
    "options": st.lists(OPTION, min_size=0, max_size=6),
    "multiSelect": st.booleans() | JSON,
})
QUESTION_INPUT = st.fixed_dictionaries({"questions": st.lists(QUESTION, max_size=6)}) | JSON

FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@FUZZ
@given(QUESTION_INPUT)
def test_question_parser_either_validates_or_says_what_is_wrong(raw: Any) -> None:
    try:
        parsed = parse_questions(raw)
    except QuestionInputError as error:
        assert str(error)
        return
    assert 1 <= len(parsed.questions) <= 4
    texts = [question.question for question in parsed.questions]
    assert len(set(texts)) == len(texts)
    for question in parsed.questions:
        assert 2 <= len(question.options) <= 4
        labels = [option.label for option in question.options]
        assert len(set(labels)) == len(labels)


@FUZZ
@given(st.fixed_dictionaries({"questions": st.lists(QUESTION, min_size=1, max_size=4)}),
       st.data())
def test_encoded_answers_echo_the_input_and_answer_every_question(raw: dict[str, Any],
                                                                  data: st.DataObject) -> None:
    try:
        parsed = parse_questions(raw)
    except QuestionInputError:
        return
    answers = {}
    for question in parsed.questions:
        labels = data.draw(st.lists(st.sampled_from([o.label for o in question.options]),
                                    max_size=3, unique=True))
        other = data.draw(st.text(max_size=50))
        answers[question.question] = QuestionAnswer(labels=tuple(labels), other_text=other)
    try:
        updated = encode_answers(raw, parsed, answers)
    except QuestionInputError as error:
        assert str(error)
        return
    assert updated["questions"] is raw["questions"]
    assert set(updated) == {"questions", "answers"}
    assert set(updated["answers"]) == {question.question for question in parsed.questions}
    assert all(isinstance(value, str) and value for value in updated["answers"].values())


@FUZZ
@given(JSON)
def test_permission_suggestions_from_the_wire_parse_or_raise_value_error(raw: Any) -> None:
    try:
        suggestion = PermissionSuggestion.from_wire(raw)
    except (ValueError, KeyError, TypeError):
        return
    wire = suggestion.to_wire()
    assert wire["destination"] in ("session", "localSettings", "projectSettings",
                                   "userSettings", "cliArg")
    for rule in wire.get("rules", []):
        assert rule.get("ruleContent", "x") is not None


class _Context:
    """Stands in for the SDK's ToolPermissionContext with fuzzed suggestions."""

    def __init__(self, suggestions: Any) -> None:
        self.suggestions = suggestions
        self.tool_use_id = "toolu_fuzz"
        self.signal = None


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tool_name=st.text(max_size=20), tool_input=JSON, suggestions=st.lists(JSON, max_size=3))
def test_any_tool_input_through_the_adapter_is_never_allowed_without_a_person(
        tmp_path: Path, tool_name: str, tool_input: Any, suggestions: list[Any]) -> None:
    db = Database.open(tmp_path / "fuzz.sqlite3")
    try:
        ledger = Ledger(db)
        broker = ApprovalBroker(db, ledger)
        asked: list[ApprovalRequest] = []

        def person_says_no(event: BrokerEvent, request: ApprovalRequest,
                           decision: Decision | None) -> None:
            if event is BrokerEvent.ADDED:
                asked.append(request)
                broker.answer(request.request_id, Decision.deny("fuzzed: no"))

        broker.subscribe(person_says_no)
        hub = SessionHub(db, ledger, broker, lambda *args: None)  # type: ignore[arg-type,return-value]
        info = SessionInfo(name="fuzz", backend=Backend.CLAUDE, cwd=str(tmp_path))
        db.upsert_session(info)
        session = ClaudeSession(info, SessionOptions(cwd=str(tmp_path)), broker, hub)
        result = asyncio.run(session.can_use_tool(tool_name, tool_input, _Context(suggestions)))
        assert result.behavior == "deny"
        assert result.message.strip()
        if asked:
            assert asked[0].tool_input == tool_input
    finally:
        db.close()
