"""Scenario reactions to what the person decided, and reading that from tool results."""

from __future__ import annotations

import pytest

from qoder_desktop.scripted_model.outcome import Outcome, answers_text, classify, step_outcome
from qoder_desktop.scripted_model.request_info import ToolResultRecord, analyse_request
from qoder_desktop.scripted_model.scenario import (
    ScenarioError,
    load_builtin_scenario,
    parse_scenario,
)


def _record(content: str, *, is_error: bool = False, tool: str = "Bash") -> ToolResultRecord:
    return ToolResultRecord(tool_use_id="t", tool_name=tool, content=content, is_error=is_error)


@pytest.mark.parametrize(("record", "outcome"), [
    (_record("not on my machine", is_error=True), Outcome.DENIED),
    (_record("<tool_use_error>String to replace not found</tool_use_error>", is_error=True),
     Outcome.FAILED),
    (_record("Exit code 1\nboom", is_error=True), Outcome.FAILED),
    (_record("File created successfully at: /w/a.py The user modified your proposed content "
             "before accepting it.", tool="Write"), Outcome.EDITED),
    (_record('Your questions have been answered: "Which?"="Table". You can now continue.',
             tool="AskUserQuestion"), Outcome.ANSWERED),
    (_record("(Bash completed with no output)"), Outcome.ALLOWED),
])
def test_the_outcome_is_read_from_the_result(record: ToolResultRecord, outcome: Outcome) -> None:
    assert classify(record) is outcome


def test_a_deny_among_parallel_calls_decides_the_step() -> None:
    assert step_outcome([_record("ok"), _record("no", is_error=True)]) is Outcome.DENIED
    assert step_outcome([]) is None
    assert answers_text([_record('have been answered: "A?"="x", "B?"="y, z". Go.',
                                 tool="AskUserQuestion")]) == "x; y, z"


SCENARIO = {
    "name": "r",
    "steps": [
        {"tool": "Bash", "input": {"command": "a"},
         "on_deny": {"text": "Not run: {reason}"},
         "on_edit": {"text": "Edited.", "then": "next", "skip": 1}},
        {"text": "Second.", "tool": "Bash", "input": {"command": "b"}},
        {"text": "Third.", "tool": "Bash", "input": {"command": "c"}},
    ],
    "closing_text": "All done.",
}


def test_a_stopping_reaction_closes_the_turn_with_its_text() -> None:
    scenario = parse_scenario(SCENARIO)
    index, step = scenario.step_after(0, "denied", {"{reason}": "because"})
    assert index == len(scenario.tool_steps)
    assert step.text == "Not run: because" and step.is_text_only


def test_a_going_on_reaction_comes_first_and_can_skip_steps() -> None:
    scenario = parse_scenario(SCENARIO)
    index, step = scenario.step_after(0, "edited", {})
    assert index == 2 and step.text == "Edited.\n\nThird."
    assert [c.input for c in step.tool_calls] == [{"command": "c"}]


def test_an_outcome_without_a_reaction_goes_on_as_before() -> None:
    scenario = parse_scenario(SCENARIO)
    assert scenario.step_after(0, "allowed", {}) == (1, scenario.steps[1])
    assert scenario.step_after(0, "failed", {}) == (1, scenario.steps[1])
    assert scenario.step_after(2, "denied", {})[1].text == "All done."


def test_every_shipped_scenario_still_loads() -> None:
    for name in ("bash", "demo", "write_edit", "question", "plan", "parallel", "slow"):
        load_builtin_scenario(name)


def test_a_reaction_on_a_text_only_step_is_refused() -> None:
    with pytest.raises(ScenarioError, match="no calls to react to"):
        parse_scenario({"name": "x", "steps": [{"text": "hi", "on_deny": {"text": "no"}}]})


def test_the_request_names_the_step_of_the_latest_calls_and_their_results() -> None:
    body = {
        "tools": [{"name": "Bash"}],
        "messages": [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_scripted000_aa", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_scripted000_aa", "content": "ok"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_scripted020_bb", "name": "Read", "input": {}},
                {"type": "tool_use", "id": "toolu_scripted021_cc", "name": "Read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_scripted021_cc", "content": "x"},
                {"type": "tool_result", "tool_use_id": "toolu_scripted020_bb", "content": "no",
                 "is_error": True}]},
        ],
    }
    info = analyse_request(body, {})
    assert info.last_step_index == 2
    assert {r.tool_use_id for r in info.last_step_results} == {
        "toolu_scripted020_bb", "toolu_scripted021_cc"}
    assert step_outcome(info.last_step_results) is Outcome.DENIED
