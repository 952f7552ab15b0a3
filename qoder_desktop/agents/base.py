"""What every backend adapter shares: the approval path, hooks, transcript and life cycle.

An adapter subclass only translates between its SDK and our models: it builds the
SDK's options and client and its permission result objects. Everything else — turning
a `can_use_tool` call into an `ApprovalRequest`, asking the broker, failing closed,
withdrawing on cancellation or CLI death, the revocation hook, the transcript — lives
here once. Both SDKs share their message class names, so messages are read by shape.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from qoder_desktop.agents import private_files
from qoder_desktop.agents.hooks import HookCallbacks
from qoder_desktop.agents.ran_tools import RanTools
from qoder_desktop.agents.requests import call_from_context
from qoder_desktop.agents.sdk_guard import result_problem, track_every_request
from qoder_desktop.agents.sink import SessionSink, SessionStartError
from qoder_desktop.agents.transcript import INTERRUPTED_TEXT, STOPPED_TEXT
from qoder_desktop.agents.transcript_writer import TranscriptWriter
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.approval.source import (
    ApprovalSource,
    Removals,
    SessionRef,
    is_withdrawn,
    removal_update,
)
from qoder_desktop.config.secrets import APP_ONLY_ENV
from qoder_desktop.domain.consent import ConsentRefused, ModeConsent, spend
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    DecisionKind,
    PermissionMode,
    RequestKind,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
)
from qoder_desktop.domain.session_options import (
    SessionOptions,
    SettingSource,
    TranscriptEvent,
    TranscriptKind,
)

log = logging.getLogger(__name__)

STDERR_TAIL_LINES = 40


class AgentSession(HookCallbacks, ApprovalSource):
    """One running agent session through one SDK: the way in for in-app sessions
    (`ApprovalSource`).

    Subclasses implement the `_sdk_*` hooks; the public coroutines are the same for
    every backend.
    """

    def __init__(self, info: SessionInfo, options: SessionOptions, broker: ApprovalBroker,
                 sink: SessionSink, env: dict[str, str] | None = None) -> None:
        super().__init__()
        self.info = info
        self.options = options
        self._broker = broker
        self._sink = sink
        self._env = dict(env or {})
        self._client: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._stopping = False
        self.risks_confirmed = False
        """True once `start` spent the person's consent to risky options."""
        self._last_text = ""
        self._transcript = TranscriptWriter(info.session_id, sink)
        self._ended_by: str | None = None  # why the current turn is ending, if a person ended it
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._revoked: list[RuleValue] = []
        self._mcp_config: Path | None = None
        self._ran = RanTools(info.session_id, sink) if self.RAN_FROM_STREAM else None
        self.prepare: Callable[[], Awaitable[None]] | None = None
        """Awaited by `start` before the CLI starts (the launcher reads credentials here,
        off the event loop); a `SessionStartError` from it fails the session."""

    # -- the SDK-specific part ---------------------------------------------------------

    @abstractmethod
    def _sdk_client(self, options: SessionOptions) -> Any:
        """Build the SDK client (not yet connected) with our callback and hooks."""

    @abstractmethod
    def _sdk_allow(self, final_input: dict[str, Any], updates: list[dict[str, Any]]) -> Any:
        """The SDK's allow result."""

    @abstractmethod
    def _sdk_deny(self, message: str, interrupt: bool) -> Any:
        """The SDK's deny result (message is never empty)."""

    SDK_ALLOW_TYPE: type = type(None)
    """The SDK's allow result class (a result of another type is refused)."""
    SDK_DENY_TYPE: type = type(None)
    """The SDK's deny result class."""

    def common_sdk_options(self, options: SessionOptions) -> dict[str, Any]:
        """The option fields both SDKs name alike, with our callback and stderr reader."""
        return {
            "cwd": options.cwd,
            "add_dirs": list(options.add_dirs),
            "tools": options.tools,
            "allowed_tools": list(options.allowed_tools),
            "disallowed_tools": list(options.disallowed_tools),
            "model": options.model,
            "settings": (json.dumps({"permissions": options.settings_permissions})
                         if options.settings_permissions else None),
            "setting_sources": [source.value for source in options.setting_sources],
            "mcp_servers": (str(self._mcp_config) if self._mcp_config is not None
                            else dict(options.mcp_servers)),
            "env": {**self._env, **self._withheld_env()},
            "stderr": self._on_stderr,
            "can_use_tool": self.can_use_tool,
        }

    def _withheld_env(self) -> dict[str, Any]:
        """Overrides that keep the app's own secrets out of the CLI's environment.

        The SDKs start the CLI with our whole environment plus `env`; the Claude SDK
        cannot drop a variable, so it gets an empty one (Qoder's drops it, see there).
        """
        return {name: "" for name in APP_ONLY_ENV}

    def _after_connect(self) -> None:
        """The CLI has started and answered the handshake (it has read its files)."""

    PROJECT_SETTINGS_FILE: str = ""
    """The project file where this CLI keeps local rules, relative to the session folder."""

    def _project_settings_file(self) -> str | None:
        """Where "save to the project" writes, if this session loads that file."""
        loads_it = SettingSource.LOCAL in self.options.setting_sources
        if not self.PROJECT_SETTINGS_FILE or not loads_it:
            return None
        return os.path.join(self.options.cwd, self.PROJECT_SETTINGS_FILE)

    def _sdk_extra_transcript(self, message: Any) -> TranscriptEvent | None:
        """A transcript line for SDK-specific messages (e.g. Qoder's denial message)."""
        return None

    # -- life cycle --------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """Our id for this session."""
        return self.info.session_id

    @property
    def stderr_tail(self) -> str:
        """The last lines the CLI wrote to stderr."""
        return "\n".join(self._stderr_tail)

    def update_env(self, env: dict[str, str]) -> None:
        """Add variables to the CLI's environment (before `start` builds the client)."""
        self._env.update(env)

    def _on_stderr(self, line: str) -> None:
        self._stderr_tail.append(line.rstrip("\n"))

    def _emit(self, kind: TranscriptKind, text: str = "", **fields: Any) -> None:
        self._transcript.emit(kind, text, **fields)

    def _set_state(self, state: SessionState, error: str | None = None) -> None:
        self.info = self.info.model_copy(update={"state": state, "error": error})
        self._sink.state_changed(self.session_id, state, error)

    async def start(self) -> None:
        """Start the CLI and send the first prompt (if any).

        Options that let tools run unapproved start only with the person's consent to
        exactly them (`SessionOptions.consent`, spent here).

        Raises:
            SessionStartError: the CLI could not be started, or risky options came
                without the person's consent.
        """
        try:
            self.risks_confirmed = self.options.spend_consent()
        except ConsentRefused as exc:
            self._emit(TranscriptKind.ERROR, f"not started: {exc}", is_error=True)
            self._set_state(SessionState.FAILED, f"not started: {exc}")
            raise SessionStartError(f"not started: {exc}") from None
        if self.prepare is not None:
            try:
                await self.prepare()
            except SessionStartError as exc:
                self._emit(TranscriptKind.ERROR, str(exc), is_error=True)
                self._set_state(SessionState.FAILED, str(exc))
                raise
        if private_files.file_backed(self.options.mcp_servers):
            self._mcp_config = private_files.write_mcp_config(dict(self.options.mcp_servers))
        try:
            self._client = self._sdk_client(self.options)
            await self._client.connect()
        except Exception as exc:
            detail = self.stderr_tail
            message = f"could not start the agent: {exc}" + (f"\n{detail}" if detail else "")
            self._set_state(SessionState.FAILED, message)
            raise SessionStartError(message) from exc
        finally:
            # The CLI reads its MCP config at start-up; the file goes at once.
            private_files.remove_private_file(self._mcp_config)
        self._after_connect()
        track_every_request(self._client)
        self._reader = asyncio.get_running_loop().create_task(
            self._read_messages(), name=f"qoder-desktop reader {self.session_id}")
        self._set_state(SessionState.IDLE)
        if self.options.prompt:
            await self.send(self.options.prompt)

    async def send(self, prompt: str) -> None:
        """Send a (follow-up) prompt."""
        self._ended_by = None
        self._emit(TranscriptKind.USER_PROMPT, prompt)
        self._set_state(SessionState.RUNNING)
        await self._client.query(prompt)

    async def interrupt(self) -> None:
        """Stop the current turn; pending requests are withdrawn by the CLI's cancel."""
        self._ended_by = self._ended_by or INTERRUPTED_TEXT
        await self._client.interrupt()

    async def set_mode(self, mode: PermissionMode, *, consent: ModeConsent | None = None,
                       ) -> None:
        """Switch the permission mode mid-session; a risky one spends the `consent` the
        confirmation dialog minted for this session and mode (else `ConsentRefused`)."""
        if mode.needs_confirmation:
            spend(consent, session_id=self.session_id, mode=mode)
        await self._client.set_permission_mode(mode.value)
        self.info = self.info.model_copy(update={"permission_mode": mode})
        self._sink.state_changed(self.session_id, self.info.state, self.info.error)

    async def stop(self) -> None:
        """End the session and its CLI; pending requests are withdrawn."""
        self._stopping = True
        self._broker.withdraw_session(self.session_id)
        await self._disconnect()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        self._set_state(SessionState.STOPPED)

    async def _disconnect(self) -> None:
        """Close the SDK client and its transport; a failure is logged, not raised."""
        if self._client is None:
            return
        try:
            await self._client.disconnect()
        except Exception:
            log.exception("disconnecting session %s failed", self.session_id)

    def revoke(self, revoked: Iterable[SessionRule]) -> None:
        """Make revoked grants ask again, although the CLI still holds its copy.

        The PreToolUse hook sends matching calls back to `can_use_tool`; the next allow
        tells the CLI to remove the rules (`ApprovalSource.answer_for`, from the store).
        """
        for rule in revoked:
            if rule.behavior is RuleBehavior.ALLOW and rule.rule not in self._revoked:
                self._revoked.append(rule.rule)

    # -- reading the message stream ----------------------------------------------------

    async def _read_messages(self) -> None:
        error: str | None = None
        try:
            async for message in self._client.receive_messages():
                self._on_message(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        if self._stopping:
            return
        withdrawn = self.withdraw_where("The agent CLI exited.")
        detail = self.stderr_tail
        message = "The agent CLI exited" + (f" ({error})" if error else "")
        if withdrawn:
            message += f"; {withdrawn} pending request(s) were withdrawn"
        if detail:
            message += f".\nLast output:\n{detail}"
        self._emit(TranscriptKind.ERROR, message, is_error=True)
        self._set_state(SessionState.FAILED, message)
        # Nothing else closes a failed session's client (the hub stops only live ones);
        # closing it ends the SDK's tasks and lets its transport clean up (Qoder's
        # deletes the temp file that holds the access token).
        await self._disconnect()

    def _on_message(self, message: Any) -> None:
        kind = type(message).__name__
        extra = self._sdk_extra_transcript(message)
        if extra is not None:
            self._transcript.line(extra)
        elif kind == "AssistantMessage":
            for block in message.content:
                block_kind = type(block).__name__
                if block_kind == "TextBlock" and block.text.strip():
                    self._last_text = block.text
                    self._emit(TranscriptKind.ASSISTANT_TEXT, block.text)
                elif block_kind == "ToolUseBlock":
                    if self._ran is not None:
                        self._ran.called(block)
                    self._transcript.call(block.name, block.id, block.input)
        elif kind == "UserMessage" and isinstance(message.content, list):
            for block in message.content:
                if type(block).__name__ == "ToolResultBlock":
                    if self._ran is not None:
                        self._ran.result(block)
                    if self._transcript.result(block.tool_use_id, block.content,
                                               bool(block.is_error)):
                        self._follow_cli_mode(PermissionMode.PLAN.value)
        elif kind == "ResultMessage":
            ended_by, self._ended_by = self._ended_by, None
            if ended_by is not None and message.is_error:
                # The CLI reports a turn a person ended as an error with a diagnostic
                # ("[ede_diagnostic] result_type=user ..."): say what happened instead.
                self._emit(TranscriptKind.SYSTEM, ended_by)
                self._set_state(SessionState.IDLE)
                return
            failed = bool(message.is_error)
            text = message.result or ("; ".join(message.errors or []) if failed else "")
            if not failed and (not text or text == self._last_text):
                turns = getattr(message, "num_turns", None)
                text = f"Finished after {turns} turns." if turns else "Finished."
            self._emit(TranscriptKind.ERROR if failed else TranscriptKind.RESULT, text or "",
                       is_error=failed)
            self._set_state(SessionState.IDLE)
        elif kind == "SystemMessage" and getattr(message, "subtype", "") == "init":
            data = getattr(message, "data", {}) or {}
            self._emit(TranscriptKind.SYSTEM,
                       f"Agent started (model {data.get('model', '?')}, "
                       f"permission mode {data.get('permissionMode', '?')}).")
            self._follow_cli_mode(data.get("permissionMode"))

    def _follow_cli_mode(self, reported: Any) -> None:
        """Show the mode the CLI says it is in (it can switch by itself, e.g. to plan)."""
        try:
            mode = PermissionMode(reported)
        except ValueError:
            return
        if mode is not self.info.permission_mode:
            self.info = self.info.model_copy(update={"permission_mode": mode})
            self._sink.state_changed(self.session_id, self.info.state, self.info.error)

    # -- the approval path -------------------------------------------------------------

    @property
    def approval_broker(self) -> ApprovalBroker:
        """The broker that decides this session's requests."""
        return self._broker

    @property
    def removals(self) -> Removals:
        """The sink (the hub): revoked rules this session's CLI still holds."""
        return self._sink

    def _session_ref(self) -> SessionRef:
        return SessionRef(self.session_id, self.info.name, self.info.backend,
                          cwd=self.options.cwd, add_dirs=tuple(self.options.add_dirs),
                          project_settings_file=self._project_settings_file())

    async def can_use_tool(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        """The SDK callback: ask the broker, answer with the SDK's result; fail closed."""
        try:
            if not isinstance(tool_input, dict):
                raise TypeError(f"tool input must be an object, got {type(tool_input).__name__}")
            request = self.request_for(self._session_ref(),
                                       call_from_context(tool_name, tool_input, context))
            decision = await self.ask(request)
            if is_withdrawn(decision):
                # The CLI died or the session is stopping: like a CLI cancel, no answer.
                # (Writing to a dead CLI fails twice in the SDK's handler and leaves an
                # unretrieved task exception per request.)
                raise asyncio.CancelledError(f"request {request.request_id} was withdrawn")
            self._note_answer(request, decision)
            answer = self.answer_for(request, decision)
            result = self._checked(answer.result, request)
            if isinstance(result, self.SDK_ALLOW_TYPE):
                self.delivered(answer)
            return result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("can_use_tool failed in session %s", self.session_id)
            return self._sdk_deny(f"Qoder Desktop failed while asking: {exc}", False)

    def _note_answer(self, request: ApprovalRequest, decision: Decision) -> None:
        """What the answer means for the transcript and the calls that ran."""
        if decision.kind.allows:
            if decision.final_input:
                if self._ran is not None:
                    self._ran.allowed(request.tool_use_id, dict(decision.final_input))
                if request.kind is RequestKind.TOOL:
                    self._transcript.edited(request.tool_use_id, request.tool_name,
                                            dict(request.tool_input), dict(decision.final_input))
            return
        self._transcript.denied(request.tool_use_id, request.tool_name, decision.message,
                                keep_planning=decision.kind is DecisionKind.KEEP_PLANNING)
        if decision.interrupt:
            self._ended_by = STOPPED_TEXT

    def _checked(self, result: Any, request: ApprovalRequest) -> Any:
        """`result` if it is a well-formed result of this SDK, otherwise a deny (logged)."""
        problem = result_problem(result, self.SDK_ALLOW_TYPE, self.SDK_DENY_TYPE)
        if problem is None:
            return result
        log.error("session %s: request %s: our answer was %s; denied instead",
                  self.session_id, request.request_id, problem)
        message = ("Qoder Desktop denied this call: its answer could not be sent as given "
                   f"({problem}).")
        self._emit(TranscriptKind.DENIAL, message, is_error=True)
        return self._sdk_deny(message, False)

    def encode(self, decision: Decision, removals: Sequence[RuleValue]) -> Any:
        """The SDK's result for `decision`; an allow also tells the CLI to drop `removals`."""
        if decision.kind.allows:
            assert decision.final_input is not None
            # The broker already dropped what the CLI would not receive.
            updates = [update.to_wire() for update in decision.updates]
            if removals:
                updates.append(removal_update(removals))
            return self._sdk_allow(dict(decision.final_input), updates)
        return self._sdk_deny(decision.message, decision.interrupt)
