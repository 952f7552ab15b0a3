"""The real Claude Code CLI (bundled with claude-agent-sdk) driven by the scripted model.

Loopback only: the CLI gets ``build_cli_env`` (its own temporary config dir, background
traffic off, proxies pointing at a closed loopback port). Each test has a hard timeout so
a hang fails instead of blocking, and checks that the CLI process is gone afterwards.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
    TextBlock,
)
from claude_agent_sdk.types import PermissionRuleValue, ToolPermissionContext
from helpers.cli_processes import assert_no_cli_left

from qoder_desktop.scripted_model import ScriptedModelServer, build_cli_env

TIMEOUT = 60.0
BUNDLED_CLI = Path(sys.modules["claude_agent_sdk"].__file__ or "").parent / "_bundled" / "claude"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]

PermissionCallback = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[Any]]


@dataclass
class Run:
    """A workspace and config dir for one CLI session, plus what the callback saw."""

    server: ScriptedModelServer
    workspace: Path
    config_dir: Path
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)

    def options(
        self, can_use_tool: PermissionCallback, scenario: str | None, **extra: Any
    ) -> ClaudeAgentOptions:
        return ClaudeAgentOptions(
            cwd=str(self.workspace),
            env=build_cli_env(self.server.base_url, self.config_dir, scenario=scenario),
            setting_sources=[],
            can_use_tool=can_use_tool,
            **extra,
        )

    async def play(
        self,
        scenario: str | None,
        can_use_tool: PermissionCallback,
        prompts: tuple[str, ...] = ("Go ahead.",),
        **extra: Any,
    ) -> list[Message]:
        """Run one CLI session: send each prompt, collect messages up to each result."""

        async def session() -> None:
            async with ClaudeSDKClient(self.options(can_use_tool, scenario, **extra)) as client:
                for prompt in prompts:
                    await client.query(prompt)
                    async for message in client.receive_response():
                        self.messages.append(message)

        await asyncio.wait_for(session(), TIMEOUT)
        return self.messages

    def recorder(
        self, answer: Callable[[str, dict[str, Any]], Any] | None = None
    ) -> PermissionCallback:
        """A can_use_tool callback that records each call, then answers (default: allow)."""

        async def can_use_tool(
            tool: str, tool_input: dict[str, Any], context: ToolPermissionContext
        ) -> Any:
            self.calls.append((tool, tool_input))
            return answer(tool, tool_input) if answer else PermissionResultAllow()

        return can_use_tool

    def results(self) -> list[ResultMessage]:
        return [m for m in self.messages if isinstance(m, ResultMessage)]




@pytest_asyncio.fixture
async def run(tmp_path: Path) -> AsyncIterator[Run]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config_dir = tmp_path / "claude-config"
    async with ScriptedModelServer() as server:
        yield Run(server, workspace, config_dir)
    await assert_no_cli_left(config_dir, "the CLI process outlived its session")


@pytest.mark.asyncio
async def test_bash_allowed_runs_and_the_turn_finishes(run: Run) -> None:
    await run.play("bash", run.recorder())
    assert run.calls == [
        ("Bash", {"command": "echo hello > hello.txt", "description": "Write hello into hello.txt"})
    ]
    assert (run.workspace / "hello.txt").read_text() == "hello\n"
    [result] = run.results()
    assert result.subtype == "success" and not result.is_error
    texts = [
        b.text
        for m in run.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    ]
    assert texts[-1] == 'Created hello.txt with the text "hello".'
    [record] = run.server.tool_results
    assert record.tool_name == "Bash" and not record.is_error
    assert {r.kind for r in run.server.requests} == {"main"}
    assert (run.config_dir / "tmp").is_dir(), "the CLI scratch dir lives in the config dir"


@pytest.mark.asyncio
async def test_bash_denied_does_not_run_and_the_model_sees_the_message(run: Run) -> None:
    await run.play(
        "bash",
        run.recorder(lambda tool, tool_input: PermissionResultDeny(message="nope from test")),
    )
    assert [tool for tool, _ in run.calls] == ["Bash"]
    assert not (run.workspace / "hello.txt").exists()
    assert any(r.is_error and "nope from test" in r.content for r in run.server.tool_results)
    assert run.results()[-1].subtype == "success"


@pytest.mark.asyncio
async def test_ask_user_question_reaches_the_callback_and_the_answer_the_model(run: Run) -> None:
    def answer(tool: str, tool_input: dict[str, Any]) -> Any:
        assert tool == "AskUserQuestion"
        questions = tool_input["questions"]
        return PermissionResultAllow(
            updated_input={
                "questions": questions,
                "answers": {q["question"]: q["options"][1]["label"] for q in questions},
            }
        )

    await run.play("question", run.recorder(answer))
    assert [tool for tool, _ in run.calls] == ["AskUserQuestion", "AskUserQuestion"]
    previews = [
        o["preview"]
        for _, tool_input in run.calls
        for q in tool_input["questions"]
        for o in q["options"]
    ]
    assert previews[0].startswith("# Qoder Desktop") and previews[2].startswith("<div")
    contents = [r.content for r in run.server.tool_results]
    assert '"Which layout should the README use?"="Detailed"' in contents[0]
    assert '"Which style should the settings card have?"="Dark"' in contents[1]


@pytest.mark.asyncio
async def test_allow_for_session_skips_the_second_identical_command(run: Run) -> None:
    def answer(tool: str, tool_input: dict[str, Any]) -> Any:
        rule = PermissionRuleValue(tool_name="Bash", rule_content=tool_input["command"])
        return PermissionResultAllow(
            updated_permissions=[
                PermissionUpdate(
                    type="addRules", rules=[rule], behavior="allow", destination="session"
                )
            ]
        )

    await run.play("repeat_command", run.recorder(answer))
    assert [i["command"] for _, i in run.calls] == ["touch marker.txt"]
    assert len(run.server.tool_results) == 2
    assert (run.workspace / "marker.txt").exists()
    assert not (run.workspace / ".claude").exists()


@pytest.mark.asyncio
async def test_write_then_edit_produce_the_edited_file(run: Run) -> None:
    await run.play("write_edit", run.recorder())
    assert [tool for tool, _ in run.calls] == ["Write", "Edit"]
    assert run.calls[0][1]["file_path"] == str(run.workspace / "greeting.py")
    text = (run.workspace / "greeting.py").read_text()
    assert 'def greet(name: str = "world") -> str:' in text


@pytest.mark.asyncio
async def test_plan_reaches_the_callback_with_the_markdown_plan(run: Run) -> None:
    await run.play("plan", run.recorder())
    [(tool, tool_input)] = run.calls
    assert tool == "ExitPlanMode"
    assert tool_input["plan"].startswith("# Plan: add a greeting module")
    assert Path(tool_input["planFilePath"]).is_relative_to(run.config_dir)
    assert "User has approved your plan" in run.server.tool_results[-1].content


@pytest.mark.asyncio
async def test_slow_step_can_be_interrupted(run: Run) -> None:
    async def session() -> None:
        options = run.options(run.recorder(), "slow")
        async with ClaudeSDKClient(options) as client:
            await client.query("Take your time.")
            async for message in client.receive_response():
                run.messages.append(message)
                if isinstance(message, AssistantMessage):
                    await client.interrupt()

    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.wait_for(session(), TIMEOUT)
    assert loop.time() - started < 20, "the interrupt did not cut the 30 s step short"
    assert run.calls == []
    assert run.results()[-1].subtype == "error_during_execution"
    assert not (run.workspace / "slow.txt").exists()


@pytest.mark.asyncio
async def test_marker_in_a_later_prompt_switches_scenario_and_compact_is_a_side_request(
    run: Run,
) -> None:
    await run.play(
        "bash",
        run.recorder(),
        prompts=("First the default.", "/compact", "Now this one. [scenario:write_edit]"),
    )
    assert [tool for tool, _ in run.calls] == ["Bash", "Write", "Edit"]
    kinds = [(r.kind, r.scenario) for r in run.server.requests]
    assert ("side", None) in kinds
    assert kinds[-1] == ("main", "write_edit")
    assert all(r.subtype == "success" for r in run.results())
