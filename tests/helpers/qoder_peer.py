"""A scripted `qodercli` on the Qoder SDK's `Transport` interface.

The Qoder CLI needs its cloud service and a token, so Qoder sessions are tested through
the SDK's real control-protocol code (`Query`, `QoderSDKClient`) with this peer in the
place of the subprocess transport. The peer speaks the JSON lines `qodercli` 1.1.76
speaks (see `qoder_agent_sdk/_internal/transport/subprocess_cli.py` and the strings in
the bundled binary):

* it answers the SDK's `initialize` control request like the CLI (commands, agents,
  models, account, capabilities) and keeps the request, whose `hooks` map each hook
  event to the SDK's callback ids;
* it answers other SDK → CLI control requests (`interrupt`, `set_permission_mode`, ...)
  with an empty success and records them;
* a test pushes CLI → SDK lines (`can_use_tool` and `hook_callback` control requests,
  `control_cancel_request`, assistant/user/system/result messages) and awaits the
  SDK's `control_response` by request id;
* it can die: end of file (the CLI exited) or a read error (the CLI crashed); after
  that every write raises `CLIConnectionError`, as the real transport's does.

Every line the SDK writes is recorded, raw and parsed. `helpers.qoder_harness.QoderHarness`
puts peers behind a real `SessionHub` (SQLite database, ledger, broker), like
`claude_harness.Harness` does for the real Claude CLI.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple

from qoder_agent_sdk import CLIConnectionError
from qoder_agent_sdk._internal.transport import Transport

WAIT = 10.0
"""Seconds a test waits for the SDK before it fails instead of hanging."""

CAPABILITIES = (
    "interrupt_receipt_v1", "interrupt_cancel_queued_v1", "msg_lifecycle_v1",
    "session_rewind_v1", "background_tasks_v1", "side_question_v1", "custom_context_v1",
    "goal_v1", "plan_mode_v1", "commands_changed_v1",
)
"""What qodercli 1.1.76 advertises in its initialize response (a subset)."""

_EOF = object()


class Asked(NamedTuple):
    """A control request the peer sent: its wire request id and the tool call's id."""

    request_id: str
    tool_use_id: str


class ScriptedQoderPeer(Transport):
    """The CLI's side of the Qoder control protocol, played from a test.

    Attributes:
        lines: every raw line the SDK wrote, in order.
        written: the same lines, parsed.
        initialize_request: the SDK's `initialize` request (`request` part).
        sdk_requests: every SDK → CLI control request (`request` part), initialize first.
        user_messages: the user messages (prompts) the SDK wrote.
        writes_after_death: lines the SDK tried to write after the peer died.
    """

    def __init__(self, *, session_id: str = "peer-session", cwd: str = "/work",
                 initialize_error: str | None = None) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.initialize_error = initialize_error
        self.lines: list[str] = []
        self.written: list[dict[str, Any]] = []
        self.initialize_request: dict[str, Any] | None = None
        self.sdk_requests: list[dict[str, Any]] = []
        self.user_messages: list[dict[str, Any]] = []
        self.writes_after_death: list[str] = []
        self.connected = False
        self.closed = False
        self.input_ended = False
        self.dead = False
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._responses: dict[str, list[dict[str, Any]]] = {}
        self._new_line = asyncio.Event()
        self._ids = itertools.count(1)

    # -- Transport ---------------------------------------------------------------------

    async def connect(self) -> None:
        """The CLI "starts"."""
        self.connected = True

    async def write(self, data: str) -> None:
        """Take what the SDK writes, record it and react like the CLI.

        Raises:
            CLIConnectionError: the peer died or was closed (as the real transport does).
        """
        if self.dead or self.closed:
            self.writes_after_death.append(data)
            raise CLIConnectionError("Cannot write to terminated process (exit code: 1)")
        for raw in data.splitlines():
            if not raw.strip():
                continue
            message = json.loads(raw)
            self.lines.append(raw)
            self.written.append(message)
            self._react(message)
        self._new_line.set()
        self._new_line = asyncio.Event()

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        """The lines the CLI "prints", as the SDK's reader sees them."""
        return self._read()

    async def _read(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            item = await self._inbox.get()
            if item is _EOF:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    async def close(self) -> None:
        """The SDK closes the transport (disconnect)."""
        self.closed = True
        self._inbox.put_nowait(_EOF)

    def is_ready(self) -> bool:
        """Ready between connect and close/death."""
        return self.connected and not self.closed and not self.dead

    async def end_input(self) -> None:
        """The SDK closes the CLI's stdin."""
        self.input_ended = True

    # -- how the CLI reacts to what the SDK writes -------------------------------------

    def _react(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "control_response":
            response = message.get("response") or {}
            self._responses.setdefault(str(response.get("request_id")), []).append(response)
        elif kind == "control_request":
            request = message.get("request") or {}
            self.sdk_requests.append(request)
            if request.get("subtype") == "initialize":
                self.initialize_request = request
                if self.initialize_error is not None:
                    self._answer_error(message["request_id"], self.initialize_error)
                else:
                    self._answer(message["request_id"], self.initialize_response())
            else:
                self._answer(message["request_id"], {})
        elif kind == "user":
            self.user_messages.append(message)

    def initialize_response(self) -> dict[str, Any]:
        """What qodercli answers to `initialize`."""
        return {
            "commands": [], "agents": [], "skills": [], "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": "auto", "displayName": "Auto", "isEnabled": True}],
            "account": {}, "capabilities": list(CAPABILITIES), "pid": 4242,
        }

    def _answer(self, request_id: str, payload: dict[str, Any]) -> None:
        self.send({"type": "control_response",
                   "response": {"subtype": "success", "request_id": request_id,
                                "response": payload}})

    def _answer_error(self, request_id: str, error: str) -> None:
        self.send({"type": "control_response",
                   "response": {"subtype": "error", "request_id": request_id, "error": error}})

    # -- what a test makes the CLI say -------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Print one JSON line to the SDK (round-tripped through JSON, like stdout)."""
        if self.dead:
            raise RuntimeError("the peer is dead; it cannot print anything")
        self._inbox.put_nowait(json.loads(json.dumps(message)))

    def new_request_id(self) -> str:
        """A fresh CLI-side control request id."""
        return f"cli-req-{next(self._ids)}-{uuid.uuid4().hex[:8]}"

    def control_request(self, request: dict[str, Any], request_id: str | None = None) -> str:
        """Send a CLI → SDK control request; returns its request id."""
        request_id = request_id or self.new_request_id()
        self.send({"type": "control_request", "request_id": request_id, "request": request})
        return request_id

    def ask(self, tool_name: str, tool_input: Any = None, *, tool_use_id: str | None = None,
            suggestions: Any = None, omit_input: bool = False, request_id: str | None = None,
            **fields: Any) -> Asked:
        """A `can_use_tool` request as qodercli sends it.

        `fields` adds or overrides request keys (title, description, decision_reason,
        decision_reason_type, blocked_path, agent_id, display_name, ...); a `None`
        suggestion list is left out, as the CLI leaves out an empty one.
        """
        tool_use_id = tool_use_id or f"toolu_{uuid.uuid4().hex[:12]}"
        request: dict[str, Any] = {"subtype": "can_use_tool", "tool_name": tool_name,
                                   "tool_use_id": tool_use_id, "display_name": tool_name}
        if not omit_input:
            request["input"] = {} if tool_input is None else tool_input
        if suggestions is not None:
            request["permission_suggestions"] = suggestions
        request.update(fields)
        return Asked(self.control_request(request, request_id), tool_use_id)

    def cancel(self, request_id: str) -> None:
        """The CLI withdraws a pending request (`control_cancel_request`)."""
        self.send({"type": "control_cancel_request", "request_id": request_id})

    def callback_ids(self, event: str) -> list[str]:
        """The SDK's hook callback ids for `event`, from its initialize request."""
        assert self.initialize_request is not None, "the SDK has not initialized yet"
        matchers = (self.initialize_request.get("hooks") or {}).get(event) or []
        return [cid for matcher in matchers for cid in matcher.get("hookCallbackIds", [])]

    def hook(self, event: str, tool_name: str, tool_input: dict[str, Any], *,
             tool_use_id: str | None = None, **extra: Any) -> str:
        """A `hook_callback` for `event` (the first registered callback); returns its id."""
        [callback_id, *_] = self.callback_ids(event)
        tool_use_id = tool_use_id or f"toolu_{uuid.uuid4().hex[:12]}"
        hook_input = {"session_id": self.session_id, "transcript_path": "", "cwd": self.cwd,
                      "permission_mode": "default", "hook_event_name": event,
                      "tool_name": tool_name, "tool_input": tool_input,
                      "tool_use_id": tool_use_id, **extra}
        return self.control_request({"subtype": "hook_callback", "callback_id": callback_id,
                                     "input": hook_input, "tool_use_id": tool_use_id})

    def system_init(self, model: str = "auto", permission_mode: str = "default") -> None:
        """The CLI's `system`/`init` message."""
        self.send({"type": "system", "subtype": "init", "session_id": self.session_id,
                   "uuid": uuid.uuid4().hex, "model": model, "permissionMode": permission_mode,
                   "cwd": self.cwd, "tools": ["Bash", "Read", "Edit", "Write"]})

    def assistant(self, *blocks: dict[str, Any]) -> None:
        """An assistant message with these content blocks."""
        self.send({"type": "assistant", "session_id": self.session_id,
                   "uuid": uuid.uuid4().hex, "parent_tool_use_id": None,
                   "message": {"id": f"msg_{uuid.uuid4().hex[:12]}", "role": "assistant",
                               "model": "auto", "content": list(blocks),
                               "stop_reason": None, "usage": {}}})

    def assistant_text(self, text: str) -> None:
        """An assistant message with one text block."""
        self.assistant({"type": "text", "text": text})

    def tool_use(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        """An assistant message with one tool_use block."""
        self.assistant({"type": "tool_use", "id": tool_use_id, "name": name,
                        "input": tool_input})

    def tool_result(self, tool_use_id: str, content: Any, *, is_error: bool = False) -> None:
        """A user message carrying a tool_result block."""
        self.send({"type": "user", "session_id": self.session_id, "uuid": uuid.uuid4().hex,
                   "parent_tool_use_id": None,
                   "message": {"role": "user", "content": [
                       {"type": "tool_result", "tool_use_id": tool_use_id,
                        "content": content, "is_error": is_error}]}})

    def permission_denied(self, tool_name: str, tool_use_id: str, message: str,
                          **extra: Any) -> None:
        """The CLI's `system`/`permission_denied` message (SDKPermissionDeniedMessage)."""
        self.send({"type": "system", "subtype": "permission_denied", "tool_name": tool_name,
                   "tool_use_id": tool_use_id, "message": message,
                   "uuid": uuid.uuid4().hex, "session_id": self.session_id, **extra})

    def result(self, text: str = "Done.", *, is_error: bool = False) -> None:
        """The `result` message that ends a turn."""
        self.send({"type": "result", "subtype": "error_during_execution" if is_error
                   else "success", "duration_ms": 12, "duration_api_ms": 10,
                   "is_error": is_error, "num_turns": 1, "session_id": self.session_id,
                   "result": text, "uuid": uuid.uuid4().hex})

    def die(self, error: BaseException | None = None) -> None:
        """The CLI goes away: end of file, or `error` raised from the read loop."""
        self._inbox.put_nowait(_EOF if error is None else error)
        self.dead = True

    # -- what the SDK answered ---------------------------------------------------------

    def responses_for(self, request_id: str) -> list[dict[str, Any]]:
        """Every `control_response` (its `response` part) the SDK wrote for `request_id`."""
        return list(self._responses.get(request_id, []))

    async def wait_written(self, predicate: Callable[[dict[str, Any]], bool],
                           timeout: float = WAIT) -> dict[str, Any]:
        """The first written line matching `predicate`, waiting for it if needed."""
        async def scan() -> dict[str, Any]:
            seen = 0
            while True:
                event = self._new_line
                for message in self.written[seen:]:
                    if predicate(message):
                        return message
                seen = len(self.written)
                await event.wait()
        return await asyncio.wait_for(scan(), timeout)

    async def response(self, request_id: str, timeout: float = WAIT) -> dict[str, Any]:
        """The SDK's `control_response` for `request_id` (its `response` part)."""
        def matches(message: dict[str, Any]) -> bool:
            return (message.get("type") == "control_response"
                    and (message.get("response") or {}).get("request_id") == request_id)
        line = await self.wait_written(matches, timeout)
        result: dict[str, Any] = line["response"]
        return result

    async def answer(self, request_id: str, timeout: float = WAIT) -> dict[str, Any]:
        """The payload of a *success* response for `request_id` (fails on an error one)."""
        response = await self.response(request_id, timeout)
        assert response["subtype"] == "success", f"an error response: {response}"
        payload: dict[str, Any] = response["response"]
        return payload

    async def barrier(self) -> None:
        """Round-trip one harmless control request, so every earlier line was handled.

        The SDK reads lines in order and answers each control request in its own task;
        once the answer to a later (unknown, so refused) request is back, an earlier
        request that was going to be answered at once has been, and an earlier cancel
        has been processed. A request that waits for a person of course has not.
        """
        request_id = self.control_request({"subtype": "peer_barrier"})
        response = await self.response(request_id)
        assert response["subtype"] == "error"  # the SDK does not know this subtype
