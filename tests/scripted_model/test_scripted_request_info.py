"""Reading requests: scenario choice, position, side requests, cwd and plan file.

The message shapes copy what Claude Code 2.1.332 sends (captured from the real CLI).
"""

from __future__ import annotations

from typing import Any

from qoder_desktop.scripted_model.request_info import analyse_request

TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Write", "input_schema": {}}]
REMINDER = {"type": "text", "text": "<system-reminder>\nsomething\n</system-reminder>\n"}
ENV = {
    "role": "system",
    "content": [
        {
            "type": "text",
            "text": "# Environment\n - Primary working directory: /tmp/ws 1\n"
            " - Is a git repository: false",
        }
    ],
}


def prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [REMINDER, {"type": "text", "text": text}]}


def call(tool_id: str, name: str = "Bash") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "doing it"},
            {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
        ],
    }


def result(
    tool_id: str,
    text: str = "ok",
    is_error: bool = False,
    extra: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": is_error},
            *(extra or []),
        ],
    }


def body(*messages: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "messages": list(messages),
        "tools": TOOLS if tools is None else tools,
        "stream": True,
    }


def test_first_request_of_a_session() -> None:
    info = analyse_request(
        body(prompt("hi [scenario:bash]"), ENV), {"x-claude-code-session-id": "s1"}
    )
    assert not info.is_side_request
    assert (info.scenario_name, info.scenario_source) == ("bash", "prompt marker")
    assert info.tool_uses_in_turn == 0
    assert info.cwd == "/tmp/ws 1"
    assert info.session_id == "s1"
    assert info.plan_file is None


def test_position_counts_tool_uses_after_the_prompt() -> None:
    info = analyse_request(
        body(
            prompt("go"),
            call("t1"),
            result("t1"),
            call("t2", "Write"),
            result("t2", "denied", is_error=True),
        ),
        {},
    )
    assert info.tool_uses_in_turn == 2
    assert [(r.tool_use_id, r.tool_name, r.content, r.is_error) for r in info.tool_results] == [
        ("t1", "Bash", "ok", False),
        ("t2", "Write", "denied", True),
    ]


def test_a_new_prompt_starts_the_scenario_again() -> None:
    closing = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
    info = analyse_request(
        body(prompt("go [scenario:bash]"), call("t1"), result("t1"), closing, prompt("again")), {}
    )
    assert info.tool_uses_in_turn == 0
    assert info.scenario_name == "bash", "an earlier marker still applies"


def test_prompt_merged_after_an_interrupt_starts_a_new_turn() -> None:
    merged = result(
        "t1",
        "rejected",
        is_error=True,
        extra=[
            {"type": "text", "text": "[Request interrupted by user for tool use]\n"},
            {"type": "text", "text": "[scenario:repeat_command] go"},
        ],
    )
    info = analyse_request(body(prompt("[scenario:bash] go"), call("t1"), merged), {})
    assert info.tool_uses_in_turn == 0
    assert info.scenario_name == "repeat_command"


def test_reminders_next_to_a_tool_result_do_not_start_a_turn() -> None:
    info = analyse_request(body(prompt("go"), call("t1"), result("t1", extra=[REMINDER])), {})
    assert info.tool_uses_in_turn == 1


def test_scenario_from_header_then_api_key() -> None:
    plain = body(prompt("go"))
    both = {"x-scripted-scenario": "plan", "x-api-key": "scripted-bash"}
    assert analyse_request(plain, both).scenario_name == "plan"
    info = analyse_request(plain, {"x-api-key": "scripted-bash"})
    assert (info.scenario_name, info.scenario_source) == ("bash", "api key")
    info = analyse_request(plain, {"authorization": "Bearer scripted-demo"})
    assert info.scenario_name == "demo"
    info = analyse_request(plain, {"x-api-key": "sk-something"})
    assert (info.scenario_name, info.scenario_source) == (None, "default")


def test_requests_without_tools_are_side_requests() -> None:
    # The model check Claude Code makes after set_model: max_tokens 1, "Hi", no tools.
    check = {
        "model": "claude-haiku-4-5",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
    }
    info = analyse_request(check, {})
    assert info.is_side_request and info.side_reason == "no tools"


def test_compaction_is_a_side_request_although_it_carries_tools() -> None:
    compact = result(
        "t1",
        extra=[
            {
                "type": "text",
                "text": "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nsummarise",
            }
        ],
    )
    info = analyse_request(body(prompt("go"), call("t1"), compact), {})
    assert info.is_side_request and info.side_reason == "text-only instruction"


def test_conversation_ending_with_the_assistant_is_a_side_request() -> None:
    info = analyse_request(body(prompt("go"), call("t1")), {})
    assert info.is_side_request


def test_plan_file_from_the_plan_mode_reminder() -> None:
    reminder = {
        "type": "text",
        "text": "Plan mode is active.\n## Plan File Info:\nNo plan file "
        "exists yet. You should create your plan at /cfg/plans/go-happy-cat.md using "
        "the Write tool.\n",
    }
    info = analyse_request(
        body({"role": "user", "content": [reminder, {"type": "text", "text": "go"}]}), {}
    )
    assert info.plan_file == "/cfg/plans/go-happy-cat.md"
    existing = {
        "type": "text",
        "text": "A plan file already exists at /cfg/plans/x.md. You can "
        "read it and make incremental edits using the Edit tool.",
    }
    info = analyse_request(body({"role": "user", "content": [existing]}), {})
    assert info.plan_file == "/cfg/plans/x.md"


def test_string_content_and_odd_shapes_do_not_crash() -> None:
    info = analyse_request(
        {
            "messages": [
                {"role": "user", "content": "plain [scenario:x]"},
                "junk",
                {"role": "assistant", "content": None},
            ],
            "tools": TOOLS,
            "system": "Primary working directory: /w",
        },
        {},
    )
    assert info.scenario_name == "x"
    assert info.cwd == "/w"
    assert info.is_side_request  # ends with an assistant turn
    assert analyse_request({}, {}).is_side_request
