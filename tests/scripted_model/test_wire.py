"""The Anthropic Messages wire format of the scripted model: a client that puts the SSE
stream back together gets exactly the message the non-streaming body holds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qoder_desktop.scripted_model.wire import (
    JSON_CHUNK,
    TEXT_CHUNK,
    ScriptedReply,
    error_body,
    stream_reply,
    text_block,
    tool_use_block,
)


async def events_of(reply: ScriptedReply) -> list[tuple[str, dict[str, Any]]]:
    """Parse the stream as an SSE client does: `event:` and `data:` lines, blank-separated."""
    raw = b"".join([chunk async for chunk in stream_reply(reply)]).decode()
    assert raw.endswith("\n\n")
    events = []
    for frame in raw.split("\n\n")[:-1]:
        name_line, data_line = frame.split("\n")
        assert name_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert data["type"] == name_line.removeprefix("event: ")
        events.append((data["type"], data))
    return events


def assemble(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The message a streaming client builds from the events."""
    message: dict[str, Any] = {}
    partial_json: dict[int, str] = {}
    for kind, data in events:
        if kind == "message_start":
            message = data["message"]
        elif kind == "content_block_start":
            assert data["index"] == len(message["content"])
            message["content"].append(dict(data["content_block"]))
        elif kind == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                message["content"][data["index"]]["text"] += delta["text"]
            else:
                partial_json[data["index"]] = (partial_json.get(data["index"], "")
                                               + delta["partial_json"])
        elif kind == "content_block_stop" and data["index"] in partial_json:
            message["content"][data["index"]]["input"] = json.loads(partial_json[data["index"]])
        elif kind == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
            message["usage"]["output_tokens"] = data["usage"]["output_tokens"]
    return message


def reply_with(*content: dict[str, Any], delay: float = 0.0) -> ScriptedReply:
    return ScriptedReply(model="scripted-model", content=list(content),
                         stop_reason="tool_use", delay_seconds=delay)


@pytest.mark.asyncio
async def test_the_stream_rebuilds_the_whole_message() -> None:
    reply = reply_with(
        text_block("I will look at the folder first, then run the tests. " * 3),
        tool_use_block("Bash", {"command": "ls -la && npm run test -- --verbose",
                                "description": "List the folder, then run the tests ✓"}),
        tool_use_block("Read", {"file_path": "/work/proj/README.md"}))
    events = await events_of(reply)
    assert [kind for kind, _ in events[:2]] == ["message_start", "ping"]
    assert [kind for kind, _ in events[-2:]] == ["message_delta", "message_stop"]
    assert assemble(events) == reply.to_message()


@pytest.mark.asyncio
async def test_long_blocks_arrive_in_pieces_and_an_empty_one_still_arrives() -> None:
    long_text = "x" * (TEXT_CHUNK * 3 + 1)
    reply = reply_with(text_block(long_text), text_block(""),
                       tool_use_block("Write", {"content": "y" * (JSON_CHUNK * 2)}))
    events = await events_of(reply)
    deltas = [data["index"] for kind, data in events if kind == "content_block_delta"]
    assert deltas.count(0) == 4 and deltas.count(1) == 1 and deltas.count(2) >= 3
    assert assemble(events) == reply.to_message()


@pytest.mark.asyncio
async def test_a_delayed_reply_sends_its_text_then_keeps_the_line_alive_before_the_tool_call(
) -> None:
    reply = reply_with(text_block("thinking"), tool_use_block("Bash", {"command": "ls"}),
                       delay=0.6)
    kinds = [kind for kind, _ in await events_of(reply)]
    text_stop = kinds.index("content_block_stop")
    tool_start = kinds.index("content_block_start", text_stop)
    assert kinds[text_stop + 1:tool_start] == ["ping", "ping"]


def test_the_message_body_starts_tool_calls_with_fresh_ids() -> None:
    first, second = tool_use_block("Bash", {}, tag="a"), tool_use_block("Bash", {}, tag="a")
    assert first["id"] != second["id"] and first["id"].startswith("toolu_scripteda_")
    body = reply_with(first).to_message()
    assert body["role"] == "assistant" and body["stop_reason"] == "tool_use"
    assert body["usage"]["output_tokens"] >= 1


def test_an_error_body_has_the_api_shape() -> None:
    assert error_body("overloaded_error", "busy") == {
        "type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
