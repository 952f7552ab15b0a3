"""What every backend adapter shares: the life cycle and the message stream.

An adapter subclass only translates between its SDK and our models: it builds the
SDK's options and client and its permission result objects. The approval path (the
permission callback, the hooks, revocation) is `agents.approvals.SessionApprovals`,
which `AgentSession` extends; here the CLI is started, prompted, interrupted, switched
and stopped, and its message stream becomes the transcript. Both SDKs share their
message class names, so messages are read by shape.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
from abc import abstractmethod
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from qoder_desktop.agents import private_files
from qoder_desktop.agents.approvals import SessionApprovals
from qoder_desktop.agents.sdk_guard import track_every_request
from qoder_desktop.agents.sink import SessionSink, SessionStartError
from qoder_desktop.agents.transcript import INTERRUPTED_TEXT
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import APP_ONLY_ENV
from qoder_desktop.domain.consent import ConsentRefused, ModeConsent, spend
from qoder_desktop.domain.models import PermissionMode, SessionInfo, SessionState
from qoder_desktop.domain.session_options import SessionOptions, TranscriptEvent, TranscriptKind

log = logging.getLogger(__name__)

STDERR_TAIL_LINES = 40


class AgentSession(SessionApprovals):
    """One running agent session through one SDK; its approval path (the way in for
    in-app sessions) is `SessionApprovals`.

    Subclasses implement the `_sdk_*` hooks; the public coroutines are the same for
    every backend.
    """

    def __init__(self, info: SessionInfo, options: SessionOptions, broker: ApprovalBroker,
                 sink: SessionSink, env: dict[str, str] | None = None) -> None:
        super().__init__(info, options, broker, sink)
        self._env = dict(env or {})
        self._client: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._stopping = False
        self.risks_confirmed = False
        """True once `start` spent the person's consent to risky options."""
        self._last_text = ""
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._mcp_config: Path | None = None
        self.prepare: Callable[[], Awaitable[None]] | None = None
        """Awaited by `start` before the CLI starts (the launcher reads credentials here,
        off the event loop); a `SessionStartError` from it fails the session."""

    # -- the SDK-specific part ---------------------------------------------------------

    @abstractmethod
    def _sdk_client(self, options: SessionOptions) -> Any:
        """Build the SDK client (not yet connected) with our callback and hooks."""

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

    def _sdk_extra_transcript(self, message: Any) -> TranscriptEvent | None:
        """A transcript line for SDK-specific messages (e.g. Qoder's denial message)."""
        return None

    # -- life cycle --------------------------------------------------------------------

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
