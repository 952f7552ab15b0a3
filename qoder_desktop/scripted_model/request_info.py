"""Reading a Messages API request the way the scripted model needs it.

Everything here is a pure function of one request (body + headers): the server keeps no
per-connection or per-session state to find its place, so CLI retries, reconnects and
re-sent histories are harmless.

Where the scenario is
    The CLI re-sends the whole conversation on every call and merges consecutive turns.
    The *current turn* starts at the last user message that carries a fresh prompt: text
    and no ``tool_result`` block, or, after an interrupt, a message where the CLI merged
    the tool result, "[Request interrupted by user ...]" and the next prompt. The
    position in the scenario is the number of ``tool_use`` blocks in assistant messages
    after that point. Each user turn therefore plays its scenario from the start.

Which scenario
    In priority order: the last ``[scenario:NAME]`` marker in user text up to and including
    the current turn's prompt; the ``x-scripted-scenario`` header (set it through the
    CLI's ``ANTHROPIC_CUSTOM_HEADERS="x-scripted-scenario: NAME"``); an API key of the
    form ``scripted-NAME`` (``ANTHROPIC_API_KEY``, sent by the CLI as ``x-api-key``); else
    the server's default.

Which script: the main conversation or a sub-agent
    The CLI runs each sub-agent as a conversation of its own (same session, same headers)
    whose first user message carries the prompt of the ``Agent`` call that started it.
    ``first_prompt`` is that message's text (system reminders left out); the server plays
    the scenario's sub-agent script whose ``prompt`` it contains (see
    ``Scenario.script_for``), else the scenario itself.

Side requests
    Besides the agent loop, the CLI makes utility calls to the model. Observed with
    Claude Code 2.1.332: a model check after ``set_model`` (``max_tokens: 1``, prompt
    "Hi", no tools) and ``/compact`` (which re-sends the agent's tools for prompt-cache
    reuse, but appends "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools." to the
    last user message). Other known kinds (session titles, summaries) carry no tools
    either. So a request is a *side request* when it has no ``tools``, or its last user
    message tells the model not to call tools, or the conversation does not end with a
    user turn. It gets a short harmless text (with a ``<summary>`` block, which compaction
    expects) and never advances or records the scenario.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

SCENARIO_MARKER_RE = re.compile(r"\[scenario:([A-Za-z0-9_\-]+)\]")
# The ids the scripted model gives its tool calls: "toolu_scripted" + step index (two or
# more digits) + the call's place in the step (one digit) + "_" + random hex (see wire.py).
STEP_ID_RE = re.compile(r"^toolu_scripted(\d{2,})(\d)_")
CWD_RE = re.compile(r"Primary working directory:\s*(\S[^\n]*)")
# Claude Code's plan-mode reminder: "No plan file exists yet. You should create your plan at
# PATH using the Write tool." / "A plan file already exists at PATH. You can read it ..."
PLAN_FILE_RE = re.compile(r"(?:create your plan at|plan file already exists at)\s+(\S+?\.md)\b")
SCENARIO_HEADER = "x-scripted-scenario"
API_KEY_PREFIX = "scripted-"
SYSTEM_REMINDER = "<system-reminder>"
INTERRUPTED_MARKER = "[Request interrupted"
# Instructions the CLI adds to forks of the main conversation that must answer in text
# only (compaction). Matched case-sensitively against the last user message.
TEXT_ONLY_MARKERS = ("Respond with TEXT ONLY", "Do NOT call any tools")


@dataclass(frozen=True)
class ToolResultRecord:
    """One tool result the model received (recorded once per ``tool_use_id``)."""

    tool_use_id: str
    tool_name: str | None
    content: str
    is_error: bool
    session_id: str | None = None
    scenario: str | None = None


@dataclass
class RequestInfo:
    """What the scripted model needs to know about one ``POST /v1/messages``."""

    is_side_request: bool
    side_reason: str | None
    scenario_name: str | None
    scenario_source: str
    tool_uses_in_turn: int
    cwd: str | None
    plan_file: str | None
    session_id: str | None
    model: str | None
    first_prompt: str | None = None
    """The text of the conversation's first user message, system reminders left out."""
    tool_names: list[str] = field(default_factory=list)
    tool_results: list[ToolResultRecord] = field(default_factory=list)
    last_step_index: int | None = None
    """The scenario step the turn's latest tool calls came from (None: no call yet)."""
    last_step_results: list[ToolResultRecord] = field(default_factory=list)
    """The results the CLI sent back for that step's calls."""


def step_index_of(tool_use_id: str) -> int | None:
    """The scenario step a scripted tool call came from, from its id (None: not ours)."""
    match = STEP_ID_RE.match(tool_use_id)
    return int(match.group(1)) if match else None


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def block_text(content: Any) -> str:
    """The text of a message or ``tool_result`` content (string or list of blocks)."""
    parts = []
    for block in _blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def _is_synthetic(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(SYSTEM_REMINDER) or stripped.startswith(INTERRUPTED_MARKER)


def _is_prompt(message: dict[str, Any]) -> bool:
    """Does this message start a new user turn?

    A user message without ``tool_result`` blocks does. One with tool results usually
    continues the turn, except when the user interrupted the turn (e.g. a deny with
    interrupt) and then typed a new prompt: the CLI merges tool result, the
    "[Request interrupted by user ...]" marker and the new prompt into one message.
    """
    if message.get("role") != "user":
        return False
    blocks = _blocks(message.get("content"))
    if not any(b.get("type") == "tool_result" for b in blocks):
        return any(b.get("type") == "text" and b.get("text") for b in blocks)
    interrupted = False
    for block in blocks:
        text = block.get("text") if block.get("type") == "text" else None
        if not isinstance(text, str) or not text.strip():
            continue
        if text.lstrip().startswith(INTERRUPTED_MARKER):
            interrupted = True
        elif interrupted and not _is_synthetic(text):
            return True
    return False


def prompt_text(message: dict[str, Any]) -> str:
    """A user message's own text: its text blocks except system reminders."""
    texts = [b["text"] for b in _blocks(message.get("content"))
             if b.get("type") == "text" and isinstance(b.get("text"), str)
             and not b["text"].lstrip().startswith(SYSTEM_REMINDER)]
    return "\n".join(texts)


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return block_text(system)


def _context_texts(body: dict[str, Any]) -> list[str]:
    texts = [_system_text(body)]
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") in ("system", "user"):
            texts.append(block_text(message.get("content")))
    return texts


def find_cwd(body: dict[str, Any]) -> str | None:
    """The session's working directory, from the CLI's environment section.

    Claude Code 2.1.x puts "Primary working directory: /path" in a ``role: "system"``
    message inside ``messages`` (older versions put it in the system prompt); look in both.
    """
    for text in _context_texts(body):
        match = CWD_RE.search(text)
        if match:
            return match.group(1).strip()
    return None


def find_plan_file(body: dict[str, Any]) -> str | None:
    """The plan file path from the latest plan-mode reminder, if plan mode is (was) active."""
    found: str | None = None
    for text in _context_texts(body):
        for match in PLAN_FILE_RE.finditer(text):
            found = match.group(1)
    return found


def _header(headers: dict[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def analyse_request(body: dict[str, Any], headers: dict[str, str]) -> RequestInfo:
    """Classify a Messages request and find the scenario name and position in it."""
    messages = [m for m in (body.get("messages") or []) if isinstance(m, dict)]
    tools = [t for t in (body.get("tools") or []) if isinstance(t, dict)]
    tool_names = [str(t.get("name")) for t in tools if t.get("name")]
    session_id = _header(headers, "x-claude-code-session-id")
    turns = [m for m in messages if m.get("role") in ("user", "assistant")]
    last_turn = turns[-1] if turns else None
    side_reason: str | None = None
    if not tool_names:
        side_reason = "no tools"
    elif last_turn is None or last_turn.get("role") != "user":
        side_reason = "conversation does not end with a user turn"
    elif any(marker in block_text(last_turn.get("content")) for marker in TEXT_ONLY_MARKERS):
        side_reason = "text-only instruction"

    turn_start = -1
    for index, message in enumerate(messages):
        if _is_prompt(message):
            turn_start = index

    marker: str | None = None
    for message in messages[: turn_start + 1]:
        if message.get("role") == "user":
            found = SCENARIO_MARKER_RE.findall(block_text(message.get("content")))
            if found:
                marker = found[-1]

    name, source = marker, "prompt marker"
    if name is None:
        name, source = _header(headers, SCENARIO_HEADER), "header"
    if not name:
        key = _header(headers, "x-api-key") or ""
        bearer = _header(headers, "authorization") or ""
        for candidate in (key, bearer.removeprefix("Bearer ").strip()):
            if candidate.startswith(API_KEY_PREFIX) and len(candidate) > len(API_KEY_PREFIX):
                name, source = candidate[len(API_KEY_PREFIX) :], "api key"
                break
    if not name:
        name, source = None, "default"

    tool_uses_in_turn = 0
    tool_use_names: dict[str, str] = {}
    turn_calls: list[str] = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_use":
                tool_use_names[str(block.get("id"))] = str(block.get("name"))
                if index > turn_start:
                    tool_uses_in_turn += 1
                    turn_calls.append(str(block.get("id")))
    last_step = step_index_of(turn_calls[-1]) if turn_calls else None
    last_step_ids = {call for call in turn_calls if step_index_of(call) == last_step}

    results: list[ToolResultRecord] = []
    for message in messages:
        if message.get("role") != "user":
            continue
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_result":
                tool_use_id = str(block.get("tool_use_id"))
                results.append(
                    ToolResultRecord(
                        tool_use_id=tool_use_id,
                        tool_name=tool_use_names.get(tool_use_id),
                        content=block_text(block.get("content")),
                        is_error=bool(block.get("is_error", False)),
                        session_id=session_id,
                        scenario=name,
                    )
                )

    first_user = next((m for m in messages if m.get("role") == "user"), None)
    last_results = [r for r in results if last_step is not None and r.tool_use_id in last_step_ids]
    return RequestInfo(
        is_side_request=side_reason is not None,
        side_reason=side_reason,
        scenario_name=name,
        scenario_source=source,
        tool_uses_in_turn=tool_uses_in_turn,
        cwd=find_cwd(body),
        plan_file=find_plan_file(body),
        session_id=session_id,
        model=body.get("model") if isinstance(body.get("model"), str) else None,
        first_prompt=prompt_text(first_user) if first_user is not None else None,
        tool_names=tool_names,
        tool_results=results,
        last_step_index=last_step,
        last_step_results=last_results,
    )


def estimate_tokens(body: Any) -> int:
    """A rough token count (4 characters a token) for usage figures and count_tokens."""
    return max(1, len(repr(body)) // 4)
