"""Plain-text summaries of tool calls and results for the transcript (both SDKs, the terminal)."""

from __future__ import annotations

import json
from typing import Any

SUMMARY_LIMIT = 2_000


def summarize_input(tool_input: dict[str, Any]) -> str:
    """A plain-text summary of a tool call's input for the transcript (the tool name apart).

    Long inputs say how much was left out; nothing is cut silently.
    """
    questions = tool_input.get("questions")
    if isinstance(questions, list) and questions:
        texts = [str(q.get("question", "")) for q in questions if isinstance(q, dict)]
        text = " / ".join(t for t in texts if t) or json.dumps(questions, ensure_ascii=False)
    else:
        for key in ("command", "file_path", "notebook_path", "path", "url", "pattern", "plan"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                text = value
                break
        else:
            text = json.dumps(tool_input, ensure_ascii=False, sort_keys=True)
    if len(text) > SUMMARY_LIMIT:
        text = f"{text[:SUMMARY_LIMIT]}… ({len(text) - SUMMARY_LIMIT} more characters)"
    return text


def result_text(content: Any) -> str:
    """The text of a tool result's content (text blocks as text, anything else as JSON)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        else:
            parts.append(json.dumps(item, ensure_ascii=False, default=str))
    return "\n".join(parts)
