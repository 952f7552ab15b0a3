"""The HTTP endpoint, exercised over loopback with httpx (no CLI)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from qoder_desktop.scripted_model import (
    ScenarioLibrary,
    ScriptedModelServer,
    ThreadedScriptedModel,
    parse_scenario,
    run_in_thread,
)

TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Write", "input_schema": {}}]
ENV = {
    "role": "system",
    "content": [{"type": "text", "text": " - Primary working directory: /tmp/work"}],
}

CUSTOM = parse_scenario(
    {
        "name": "custom",
        "steps": [
            {
                "text": "writing",
                "tool": "Write",
                "input": {"file_path": "{cwd}/a.txt", "content": "x" * 200 + " {cwd} {other}"},
            },
            {"tool": "Bash", "input": {"command": "touch b"}, "delay_seconds": 0.6},
        ],
        "closing_text": "all done",
    }
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def request_body(*messages: dict[str, Any], stream: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 1000,
        "messages": list(messages),
        "tools": TOOLS,
        "stream": stream,
        **extra,
    }


def parse_sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        data = json.loads(lines["data"])
        assert data["type"] == lines["event"]
        events.append((lines["event"], data))
    return events


def assemble(events: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], str]:
    """Rebuild content blocks and the stop reason the way an Anthropic client does."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    stop_reason = ""
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
            partial[data["index"]] = ""
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                assert delta["type"] == "input_json_delta"
                partial[data["index"]] += delta["partial_json"]
        elif name == "content_block_stop":
            if blocks[data["index"]]["type"] == "tool_use":
                blocks[data["index"]]["input"] = json.loads(partial[data["index"]])
        elif name == "message_delta":
            stop_reason = data["delta"]["stop_reason"]
            assert data["usage"]["output_tokens"] > 0
    return [blocks[i] for i in sorted(blocks)], stop_reason


@pytest_asyncio.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer(ScenarioLibrary([CUSTOM])) as srv:
        yield srv


def client(srv: ScriptedModelServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=srv.base_url, trust_env=False, timeout=10)


@pytest.mark.asyncio
async def test_binds_loopback_only_on_a_free_port(server: ScriptedModelServer) -> None:
    assert server.base_url == f"http://127.0.0.1:{server.port}"
    assert server.port > 0
    assert server._server is not None
    for listener in server._server.servers:
        for sock in listener.sockets:
            assert sock.getsockname()[0] == "127.0.0.1"


@pytest.mark.asyncio
async def test_streams_a_tool_call_exactly_like_the_api(server: ScriptedModelServer) -> None:
    async with client(server) as http:
        response = await http.post(
            "/v1/messages",
            json=request_body(user("go [scenario:custom]"), ENV),
            headers={"x-api-key": "scripted-bash"},
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["role"] == "assistant" and start["content"] == [] and start["stop_reason"] is None
    assert start["model"] == "claude-opus-5-5"
    content, stop_reason = assemble(events)
    assert stop_reason == "tool_use"
    assert content[0] == {"type": "text", "text": "writing"}
    assert content[1]["type"] == "tool_use" and content[1]["name"] == "Write"
    assert content[1]["input"]["file_path"] == "/tmp/work/a.txt"
    assert content[1]["input"]["content"].endswith(" /tmp/work {other}")
    assert content[1]["id"].startswith("toolu_")
    deltas = [
        d
        for n, d in events
        if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta"
    ]
    assert len(deltas) > 1, "tool input arrives in several partial_json chunks"


@pytest.mark.asyncio
async def test_history_moves_the_scenario_on_and_ends_with_closing_text(
    server: ScriptedModelServer,
) -> None:
    first_call = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}],
    }
    first_result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "written"}],
    }
    second_call = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {}}],
    }
    second_result = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "is_error": True,
                "content": [{"type": "text", "text": "nope from test"}],
            }
        ],
    }
    async with client(server) as http:
        response = await http.post(
            "/v1/messages",
            json=request_body(
                user("[scenario:custom]"),
                first_call,
                first_result,
                second_call,
                second_result,
                stream=False,
            ),
        )
        # The CLI re-sends the history: results are recorded once.
        await http.post(
            "/v1/messages",
            json=request_body(
                user("[scenario:custom]"), first_call, first_result, second_call, second_result
            ),
        )
    message = response.json()
    assert message["type"] == "message" and message["stop_reason"] == "end_turn"
    assert message["content"] == [{"type": "text", "text": "all done"}]
    assert [(r.tool_use_id, r.content, r.is_error, r.tool_name) for r in server.tool_results] == [
        ("toolu_1", "written", False, "Write"),
        ("toolu_2", "nope from test", True, "Bash"),
    ]
    assert [r.step_index for r in server.requests] == [2, 2]


@pytest.mark.asyncio
async def test_delay_sends_pings_and_can_be_cut_short(server: ScriptedModelServer) -> None:
    history = [
        user("[scenario:custom]"),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
        },
    ]
    async with client(server) as http:
        started = time.monotonic()
        response = await http.post("/v1/messages", json=request_body(*history))
        assert time.monotonic() - started >= 0.5
        names = [name for name, _ in parse_sse(response.text)]
        assert names.count("ping") >= 2
        # A client that goes away mid-delay (an interrupt) leaves the server healthy.
        async with http.stream("POST", "/v1/messages", json=request_body(*history)) as stream:
            async for _ in stream.aiter_bytes():
                break
        again = await http.post("/v1/messages", json=request_body(user("[scenario:custom]")))
    assert again.status_code == 200


@pytest.mark.asyncio
async def test_side_requests_get_a_short_text_and_touch_nothing(
    server: ScriptedModelServer,
) -> None:
    async with client(server) as http:
        response = await http.post(
            "/v1/messages",
            json={"model": "claude-haiku-4-5", "max_tokens": 1, "messages": [user("Hi")]},
        )
    assert response.json()["content"] == [{"type": "text", "text": "OK"}]
    assert response.json()["stop_reason"] == "end_turn"
    assert server.requests[-1].kind == "side"
    assert server.tool_results == []


@pytest.mark.asyncio
async def test_unknown_scenario_says_which_exist(server: ScriptedModelServer) -> None:
    async with client(server) as http:
        response = await http.post(
            "/v1/messages", json=request_body(user("[scenario:nope]"), stream=False)
        )
    text = response.json()["content"][0]["text"]
    assert "unknown scenario 'nope'" in text and "custom" in text and "bash" in text


@pytest.mark.asyncio
async def test_default_scenario_when_none_is_named() -> None:
    async with ScriptedModelServer(default_scenario="bash") as srv, client(srv) as http:
        response = await http.post("/v1/messages", json=request_body(user("hi"), stream=False))
    assert response.json()["content"][1]["input"]["command"] == "echo hello > hello.txt"


@pytest.mark.asyncio
async def test_count_tokens_and_other_paths(server: ScriptedModelServer) -> None:
    async with client(server) as http:
        tokens = await http.post(
            "/v1/messages/count_tokens", json={"model": "m", "messages": [user("hello")]}
        )
        missing = await http.get("/v1/models")
        head = await http.head("/api/hello")
        bad = await http.post("/v1/messages", content=b"not json")
    assert tokens.status_code == 200 and tokens.json()["input_tokens"] > 0
    assert missing.status_code == 404 and missing.json()["type"] == "error"
    assert head.status_code == 200
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.asyncio
async def test_stop_is_idempotent_and_start_twice_fails() -> None:
    srv = ScriptedModelServer()
    await srv.start()
    with pytest.raises(RuntimeError):
        await srv.start()
    await srv.stop()
    await srv.stop()
    with pytest.raises(httpx.ConnectError):
        async with client(srv) as http:
            await http.get("/")


def test_threaded_helper_serves_sync_callers() -> None:
    with ThreadedScriptedModel(default_scenario="bash") as model:
        response = httpx.post(
            f"{model.base_url}/v1/messages",
            trust_env=False,
            json=request_body(
                user("go"),
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "fine"}
                    ],
                },
                stream=False,
            ),
        )
        assert response.json()["stop_reason"] == "end_turn"
        assert [r.content for r in model.tool_results] == ["fine"]
    with run_in_thread() as srv:
        assert httpx.get(f"{srv.base_url}/x", trust_env=False).status_code == 404


@pytest.mark.asyncio
async def test_broken_resolver_is_reported_in_the_chat() -> None:
    def resolver(name: str) -> Any:
        raise ValueError("file is broken")

    async with ScriptedModelServer(resolver) as srv, client(srv) as http:
        response = await http.post("/v1/messages", json=request_body(user("x"), stream=False))
    assert "file is broken" in response.json()["content"][0]["text"]


@pytest.mark.asyncio
async def test_concurrent_requests_are_served_independently(server: ScriptedModelServer) -> None:
    async with client(server) as http:
        responses = await asyncio.gather(
            *[
                http.post("/v1/messages", json=request_body(user("[scenario:bash]"), stream=False))
                for _ in range(5)
            ]
        )
    assert all(
        r.json()["content"][1]["input"]["command"] == "echo hello > hello.txt" for r in responses
    )
