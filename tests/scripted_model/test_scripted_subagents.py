"""Sub-agent scripts: each sub-agent's conversation plays the script its prompt names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from qoder_desktop.scripted_model import (
    ScenarioError,
    ScenarioLibrary,
    ScriptedModelServer,
    load_builtin_scenario,
    parse_scenario,
)

REMINDER = {"type": "text", "text": "<system-reminder>\nSome context.\n</system-reminder>\n"}
TOOLS = [{"name": "Agent", "input_schema": {}}, {"name": "Bash", "input_schema": {}}]


def _agent(prompt: str) -> dict[str, Any]:
    return {"tool": "Agent", "input": {"description": "help", "prompt": prompt,
                                       "subagent_type": "general-purpose",
                                       "run_in_background": False}}


def _scenario(**extra: Any) -> dict[str, Any]:
    return {
        "name": "helpers",
        "steps": [{"calls": [_agent("Run touch a."), _agent("Run touch a, then b.")]},
                  {"text": "Both helpers are done."}],
        "subagents": [
            {"name": "one", "prompt": "Run touch a.",
             "steps": [{"tool": "Bash", "input": {"command": "touch a"}},
                       {"text": "Made a."}]},
            {"name": "two", "prompt": "Run touch a, then b.",
             "steps": [{"tool": "Bash", "input": {"command": "touch a b"}},
                       {"text": "Made a and b."}]},
        ],
        **extra,
    }


def _user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [REMINDER, *({"type": "text", "text": t} for t in texts)]}


def _calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] == "tool_use"]


@pytest_asyncio.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer(ScenarioLibrary([parse_scenario(_scenario())])) as srv:
        yield srv


async def _ask(server: ScriptedModelServer, *messages: dict[str, Any]) -> dict[str, Any]:
    """One non-streamed model turn for a conversation of the `helpers` scenario."""
    async with httpx.AsyncClient(base_url=server.base_url, trust_env=False,
                                 timeout=10) as http:
        response = await http.post(
            "/v1/messages", headers={"x-scripted-scenario": "helpers"},
            json={"model": "m", "max_tokens": 100, "messages": list(messages), "tools": TOOLS})
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.asyncio
async def test_each_sub_agent_conversation_plays_its_own_script(
        server: ScriptedModelServer) -> None:
    main = await _ask(server, _user("Go ahead."))
    assert [c["input"]["prompt"] for c in _calls(main)] == ["Run touch a.",
                                                            "Run touch a, then b."]
    # The CLI starts each sub-agent as a conversation of its own, in either order.
    second = await _ask(server, _user("Run touch a, then b."))
    first = await _ask(server, _user("Run touch a."))
    [touch_ab] = _calls(second)
    [touch_a] = _calls(first)
    assert (touch_a["input"], touch_ab["input"]) == ({"command": "touch a"},
                                                     {"command": "touch a b"})
    # Each goes on in its own script after its tool result.
    done = await _ask(server, _user("Run touch a."),
                      {"role": "assistant", "content": [touch_a]},
                      {"role": "user", "content": [{"type": "tool_result",
                                                    "tool_use_id": touch_a["id"],
                                                    "content": ""}]})
    assert done["content"] == [{"type": "text", "text": "Made a."}]
    assert [(r.scenario, r.step_index) for r in server.requests] == [
        ("helpers", 0), ("two", 0), ("one", 0), ("one", 1)]


@pytest.mark.asyncio
async def test_a_later_prompt_in_the_main_conversation_does_not_switch_script(
        server: ScriptedModelServer) -> None:
    main = await _ask(server, _user("Go ahead."))
    calls = _calls(main)
    results = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": c["id"], "content": "report"} for c in calls]}
    reply = await _ask(server, _user("Go ahead."), {"role": "assistant", "content": calls},
                       results)
    assert reply["content"] == [{"type": "text", "text": "Both helpers are done."}]


def test_the_longest_matching_prompt_wins_and_other_conversations_play_the_scenario() -> None:
    scenario = parse_scenario(_scenario())
    assert scenario.script_for("Run touch a, then b.").name == "two"
    assert scenario.script_for("Run touch a.").name == "one"
    assert scenario.script_for("Go ahead.") is scenario
    assert scenario.script_for(None) is scenario


def test_a_sub_agent_no_agent_call_starts_is_refused() -> None:
    data = _scenario()
    data["subagents"][0]["prompt"] = "Run touch A."  # a typo: no Agent call has it
    with pytest.raises(ScenarioError, match="no Agent call in this scenario has the prompt"):
        parse_scenario(data)


def test_two_sub_agents_with_one_prompt_are_refused() -> None:
    data = _scenario()
    data["subagents"][1]["prompt"] = "Run touch a."
    with pytest.raises(ScenarioError, match="same prompt"):
        parse_scenario(data)


def test_the_shipped_parallel_sub_agents_scenario_starts_two_at_once() -> None:
    scenario = load_builtin_scenario("parallel_subagents")
    [start] = [step for step in scenario.tool_steps if len(step.tool_calls) == 2]
    commands = []
    for call in start.tool_calls:
        assert call.tool == "Agent" and call.input["run_in_background"] is False
        [first] = scenario.script_for(call.input["prompt"]).tool_steps
        commands.append(first.tool_calls[0].input["command"])
    assert commands == ["touch a", "touch a link_out/../escaped.txt"]
