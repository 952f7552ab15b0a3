"""Anthropic Messages API wire format: response messages and their SSE event stream."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

TEXT_CHUNK = 24
JSON_CHUNK = 48
PING_INTERVAL = 0.5


@dataclass
class ScriptedReply:
    """One assistant message to send: content blocks, stop reason and an optional delay."""

    model: str
    content: list[dict[str, Any]]
    stop_reason: str
    input_tokens: int = 1
    delay_seconds: float = 0.0
    message_id: str = field(default_factory=lambda: f"msg_scripted_{uuid.uuid4().hex[:20]}")

    @property
    def output_tokens(self) -> int:
        return max(1, len(json.dumps(self.content)) // 4)

    def to_message(self) -> dict[str, Any]:
        """The non-streaming response body."""
        return {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.content,
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, tool_input: dict[str, Any], tag: str = "") -> dict[str, Any]:
    """A ``tool_use`` block with a fresh id (``tag`` is only there to help debugging)."""
    return {
        "type": "tool_use",
        "id": f"toolu_scripted{tag}_{uuid.uuid4().hex[:16]}",
        "name": name,
        "input": tool_input,
    }


def sse_event(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _block_events(index: int, block: dict[str, Any]) -> list[bytes]:
    events: list[bytes] = []
    if block["type"] == "text":
        events.append(
            sse_event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": text_block("")},
            )
        )
        for piece in _chunks(block["text"], TEXT_CHUNK):
            events.append(
                sse_event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
            )
    elif block["type"] == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        events.append(
            sse_event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        raw = json.dumps(block["input"], ensure_ascii=False)
        for piece in _chunks(raw, JSON_CHUNK):
            events.append(
                sse_event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
            )
    else:  # pragma: no cover - we only build text and tool_use blocks
        raise ValueError(f"unsupported block type {block['type']!r}")
    events.append(sse_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


async def stream_reply(reply: ScriptedReply) -> AsyncIterator[bytes]:
    """The SSE events for ``reply``, in the order the Anthropic API sends them.

    With ``delay_seconds``, the text blocks (if any) are sent first, then ``ping`` events
    keep the connection alive until the delay is over, then the tool calls follow. A
    client that disconnects during the delay simply cancels this generator.
    """
    start_message = reply.to_message()
    start_message["content"] = []
    start_message["stop_reason"] = None
    start_message["usage"] = dict(start_message["usage"], output_tokens=1)
    yield sse_event("message_start", {"type": "message_start", "message": start_message})
    yield sse_event("ping", {"type": "ping"})

    delayed = reply.delay_seconds > 0
    for index, block in enumerate(reply.content):
        if delayed and block["type"] != "text":
            remaining = reply.delay_seconds
            while remaining > 0:
                step = min(PING_INTERVAL, remaining)
                await asyncio.sleep(step)
                remaining -= step
                yield sse_event("ping", {"type": "ping"})
            delayed = False
        for event in _block_events(index, block):
            yield event
    if delayed:  # text-only reply with a delay: wait before ending the turn
        await asyncio.sleep(reply.delay_seconds)

    yield sse_event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
    )
    yield sse_event("message_stop", {"type": "message_stop"})


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """An Anthropic-style error body."""
    return {"type": "error", "error": {"type": error_type, "message": message}}
