"""Scenario files: the shipped ones load and are valid, bad ones fail with clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qoder_desktop.scripted_model.scenario import (
    Scenario,
    ScenarioError,
    ScenarioLibrary,
    ScenarioStep,
    builtin_scenario_names,
    load_builtin_scenario,
    load_scenario_file,
    parse_scenario,
    substitute,
)
from qoder_desktop.scripted_model.scenario_names import builtin_scenario_names as names_alone

REQUIRED = {
    "bash",
    "write_edit",
    "repeat_command",
    "question",
    "multi_question",
    "plan",
    "slow",
    "demo",
    "parallel",
}


def test_every_required_scenario_ships() -> None:
    assert set(builtin_scenario_names()) >= REQUIRED


NAMES_PROBE = """
import json, sys
from qoder_desktop.scripted_model.scenario_names import builtin_scenario_names
names = builtin_scenario_names()
heavy = ("pydantic", "qoder_desktop.scripted_model.scenario")
print(json.dumps({"names": names, "loaded": [name for name in heavy if name in sys.modules]}))
"""


def test_the_scenario_names_are_listed_without_the_scenario_models(tmp_path: Path) -> None:
    # the --demo window lists them while its scripted model runs in a process of its own
    done = subprocess.run([sys.executable, "-c", NAMES_PROBE], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["names"] == builtin_scenario_names() == names_alone()
    assert "demo" in report["names"]
    assert report["loaded"] == []


@pytest.mark.parametrize("name", sorted(builtin_scenario_names()))
def test_shipped_scenario_is_valid(name: str) -> None:
    scenario = load_builtin_scenario(name)
    assert scenario.name == name
    assert scenario.tool_steps, "every shipped scenario calls at least one tool"
    assert scenario.closing_step.text


@pytest.mark.parametrize("name", sorted(builtin_scenario_names()))
def test_ask_user_question_inputs_respect_the_cli_limits(name: str) -> None:
    for step in load_builtin_scenario(name).tool_steps:
        for call in step.tool_calls:
            if call.tool != "AskUserQuestion":
                continue
            questions = call.input["questions"]
            assert 1 <= len(questions) <= 4
            for q in questions:
                assert set(q) == {"question", "header", "options", "multiSelect"}
                assert len(q["header"]) <= 12
                assert 2 <= len(q["options"]) <= 4
                for option in q["options"]:
                    assert (
                        {"label", "description"}
                        <= set(option)
                        <= {"label", "description", "preview"}
                    )


def test_question_scenario_has_markdown_and_html_previews() -> None:
    previews = [
        option["preview"]
        for step in load_builtin_scenario("question").tool_steps
        for q in step.tool_calls[0].input["questions"]
        for option in q["options"]
    ]
    assert any(p.startswith("#") for p in previews)
    assert any(p.startswith("<div") for p in previews)


def test_multi_question_has_a_multi_select_question() -> None:
    [step] = load_builtin_scenario("multi_question").tool_steps
    questions = step.tool_calls[0].input["questions"]
    assert len(questions) >= 2
    assert any(q["multiSelect"] for q in questions)


def test_repeat_command_repeats_a_command_the_cli_does_not_auto_allow() -> None:
    commands = [
        s.tool_calls[0].input["command"] for s in load_builtin_scenario("repeat_command").tool_steps
    ]
    assert len(commands) == 2 and commands[0] == commands[1]
    assert commands[0].split()[0] not in {"ls", "echo", "cat", "pwd", "git", "grep", "find"}


def test_slow_scenario_has_an_interruptible_delay_before_its_bash_call() -> None:
    [step] = load_builtin_scenario("slow").tool_steps
    assert step.delay_seconds >= 10
    assert step.tool_calls[0].tool == "Bash"


def test_step_lookup_by_tool_count() -> None:
    scenario = parse_scenario(
        {
            "name": "x",
            "steps": [
                {"tool": "Bash", "input": {"command": "a"}},
                {
                    "calls": [
                        {"tool": "Read", "input": {"file_path": "/1"}},
                        {"tool": "Read", "input": {"file_path": "/2"}},
                    ]
                },
                {"text": "bye"},
            ],
        }
    )
    assert scenario.total_tool_calls == 3
    assert scenario.step_for_tool_count(0)[0] == 0
    assert scenario.step_for_tool_count(1)[0] == 1
    assert scenario.step_for_tool_count(3) == (2, scenario.steps[2])
    assert scenario.step_for_tool_count(99)[1].text == "bye"


def test_closing_text_is_used_when_the_last_step_calls_a_tool() -> None:
    scenario = parse_scenario(
        {"name": "x", "steps": [{"tool": "Bash", "input": {}}], "closing_text": "the end"}
    )
    assert scenario.step_for_tool_count(1)[1] == ScenarioStep(text="the end")


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"name": "x", "steps": [{}]}, "steps.0"),
        (
            {"name": "x", "steps": [{"text": "a"}, {"tool": "Bash", "input": {}}]},
            "only the last step may be text-only",
        ),
        ({"name": "x", "steps": [{"tool": "Bash", "calls": [{"tool": "Bash"}]}]}, "not both"),
        ({"name": "x", "steps": [{"input": {"a": 1}, "text": "t"}]}, "'input' given without"),
        ({"name": "x", "steps": [{"tool": "Bash", "delay_seconds": -1}]}, "delay_seconds"),
        ({"name": "x", "steps": [{"tool": "Bash", "typo": 1}]}, "typo"),
        ({"name": "bad name!", "steps": []}, "name"),
        ([1, 2], "top level must be a JSON object"),
    ],
)
def test_invalid_scenarios_fail_with_a_clear_message(data: object, fragment: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(json.dumps(data), source="broken.json")
    assert "broken.json" in str(info.value)
    assert fragment in str(info.value)


def test_invalid_json_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{nope", encoding="utf-8")
    with pytest.raises(ScenarioError, match="not valid JSON"):
        load_scenario_file(path)


def test_file_name_must_match_scenario_name(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"name": "x", "steps": []}), encoding="utf-8")
    with pytest.raises(ScenarioError, match="does not match the file name"):
        load_scenario_file(path)


def test_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario_file(tmp_path / "absent.json")


def test_unknown_builtin_lists_the_known_ones() -> None:
    with pytest.raises(ScenarioError, match="bash"):
        load_builtin_scenario("no_such_scenario")


def test_library_resolves_extras_first_and_unknown_to_none() -> None:
    mine = Scenario(name="bash", steps=[ScenarioStep(text="mine")])
    library = ScenarioLibrary([mine])
    assert library("bash") is mine
    demo = library("demo")
    assert demo is not None and demo.name == "demo"
    assert library("nope") is None
    assert "demo" in library.names()
    assert ScenarioLibrary([mine], include_builtin=False).names() == ["bash"]


def test_substitute_replaces_only_the_known_placeholders() -> None:
    value = {"a": "{cwd}/x", "b": ["{plan_file}", "{other}", "<div style='{x}'>"], "c": 3}
    out = substitute(value, {"{cwd}": "/w", "{plan_file}": "/p.md"})
    assert out == {"a": "/w/x", "b": ["/p.md", "{other}", "<div style='{x}'>"], "c": 3}
    assert value["a"] == "{cwd}/x", "the scenario data is not modified"
