"""The app side of terminal hooks: a per-user Unix socket on the app's asyncio loop.

Each connection is one ``PermissionRequest`` hook call (see `protocol`). It becomes an
`ApprovalRequest` of the terminal session its hook proves it belongs to (the CLI's
``session_id``, held to the CLI process and its own transcript file: see `binding`) and
goes through the same broker as in-app sessions: dialogs, queue, tray, ledger. The answer goes back
as the hook's output (`permission_result` with the session grant forwarded, so the CLI
holds it and stays the authority).

The terminal always keeps its own prompt: nobody answering within the wait set in
Settings, the hook going away (the person answered No/Esc in the terminal, or quit),
a result for the call appearing in the session's transcript (answered Yes in the
terminal), or the app quitting all *withdraw* the request, and the hook prints nothing.
Nothing is ever allowed by a timeout.

Only the user can reach the socket: it lives in a 0700 folder, is itself 0600, and on
every connection the app and the hook each prove they hold the token the app wrote to a
0600 file at start (`challenge`); neither sends it, and every later line is sealed.

Any process of the user may still connect: `listener` caps the connections and owns
``accept()``, and `challenge` reads little from a connection, briefly, until it proved
itself, so a flood of connections can neither freeze the app nor fill its log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoder_desktop.agents.hub import HubEvent, HubEventKind, SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.approval.source import (
    ApprovalSource,
    SessionRef,
    ToolCall,
    is_withdrawn,
)
from qoder_desktop.config.private_file import write_private
from qoder_desktop.domain.hook_events import TerminalAgent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    RuleValue,
    SessionState,
)
from qoder_desktop.terminal import protocol
from qoder_desktop.terminal.binding import (
    Binding,
    CliProcess,
    SessionBindings,
    checked_transcript,
    peer_cli,
)
from qoder_desktop.terminal.challenge import HANDSHAKE_TIMEOUT, Refused, TooSlow, accept_hook
from qoder_desktop.terminal.hook_lines import (
    ANSWERED_IN_TERMINAL,
    hook_leaves,
    hook_output,
    parse_hook_event,
    printed,
    send,
)
from qoder_desktop.terminal.listener import (
    MAX_CONNECTIONS,
    HookConnection,
    HookListener,
    terminal_log_limit,
)
from qoder_desktop.terminal.remote_transcript import RemoteTranscripts
from qoder_desktop.terminal.transcript import Rest, TranscriptFollower

log = logging.getLogger(__name__)

APP_QUIT = "Qoder Desktop quit; the terminal asks instead."


class TerminalServerError(RuntimeError):
    """The terminal hook socket could not be set up."""


@dataclass(frozen=True)
class HookOrigin:
    """A remote host's own way in: its socket here (its SSH tunnel's far end) and the
    token its deployed hook holds. Requests on it are that host's, whatever they claim.

    Its hooks run on another machine: the peer of the socket is our ``ssh``, and their
    transcript paths name files over there, so neither is checked or followed here.
    """

    host: str
    socket_path: Path
    token: str = field(repr=False)


class TerminalHookServer(ApprovalSource):
    """Answers terminal agents' PermissionRequest hooks through the broker: the way in
    for terminal agents (`ApprovalSource`).

    Args:
        broker: decides each request (a person; deny rules of the session).
        hub: gives each terminal session and takes its transcript.
        wait_seconds: how long a person may take (a function is read per request).
        environ: where to find the runtime folder (``os.environ`` when None).
        follow_transcripts: read each session's transcript file.
        max_connections: open hook connections at most (see `listener`).
        handshake_timeout: seconds a connection may take to prove it is a hook.
        origin: serve one remote host's socket with its token (None: this machine's).
        bindings: the session bindings, shared by every hook server of the app.
    """

    def __init__(self, broker: ApprovalBroker, hub: SessionHub, *,
                 wait_seconds: float | Callable[[], float] = 180.0,
                 environ: Mapping[str, str] | None = None,
                 follow_transcripts: bool = True, max_connections: int = MAX_CONNECTIONS,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT,
                 origin: HookOrigin | None = None,
                 bindings: SessionBindings | None = None) -> None:
        super().__init__(broker, hub)
        self._broker = broker
        self._hub = hub
        self._wait = wait_seconds
        self._environ = environ
        self._follow = follow_transcripts
        self._max_connections = max_connections
        self._handshake_timeout = handshake_timeout
        self._log_limit = terminal_log_limit()
        self.listener: HookListener | None = None
        """Accepts connections under the cap (renewed at each start)."""
        self._token = ""
        self._handlers: set[asyncio.Task[Any]] = set()
        self._followers: dict[str, TranscriptFollower] = {}
        self._unsubscribe_hub: Callable[[], None] | None = None
        self.origin = origin
        self.remote_transcripts = RemoteTranscripts(hub.add_transcript_line)
        """What a remote host's hooks stream of their sessions' transcripts."""
        self.bindings = SessionBindings() if bindings is None else bindings
        """Which app session each CLI session id is bound to (pass it to other servers)."""
        self.refused = 0
        """Connections refused for want of the right token (or too slow to prove it)."""
        self.timed_out = 0
        """Connections dropped for not proving themselves within the handshake deadline."""

    # -- the way in (ApprovalSource) -------------------------------------------------------

    def encode(self, decision: Decision, removals: Sequence[RuleValue]) -> dict[str, Any]:
        """The hook's output for `decision` (see `hook_output`)."""
        return hook_output(decision, removals)

    @property
    def socket_path(self) -> Path:
        """Where hooks connect."""
        if self.origin is not None:
            return self.origin.socket_path
        return protocol.socket_path(self._environ)

    @property
    def running(self) -> bool:
        """True between `start()` and `stop()`."""
        return self.listener is not None

    # -- life cycle ----------------------------------------------------------------------

    def _prepare_folder(self) -> Path:
        folder = self.socket_path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise TerminalServerError(f"{folder} is not a folder of this user, so terminal "
                                      "prompts are not taken.")
        os.chmod(folder, 0o700)
        return folder

    async def start(self) -> None:
        """Write a fresh token and listen on the socket; returns once listening.

        Raises:
            TerminalServerError: the folder, token or socket could not be set up.
        """
        if self.listener is not None:
            raise TerminalServerError("the terminal hook server is already running")
        try:
            folder = self._prepare_folder()
            path = self.socket_path
            if len(os.fsencode(path)) >= 104:
                raise TerminalServerError(f"the socket path {path} is too long")
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            if self.origin is not None:
                self._token = self.origin.token
            else:
                self._token = secrets.token_urlsafe(32)
                write_private(protocol.token_path(self._environ), self._token + "\n")
            listener = HookListener(self._on_connection, max_connections=self._max_connections)
            listener.listen(path)
        except OSError as exc:
            raise TerminalServerError(f"Terminal prompts are not taken: {exc}") from exc
        self.listener = listener
        self._unsubscribe_hub = self._hub.subscribe(self._hub_changed)
        self._log_limit.install()
        log.info("terminal hooks: listening on %s", path)
        del folder

    async def stop(self) -> None:
        """Stop listening; open requests are withdrawn (the terminals ask instead)."""
        listener, self.listener = self.listener, None
        if listener is None:
            return
        listener.close()
        if self._unsubscribe_hub is not None:
            unsubscribe, self._unsubscribe_hub = self._unsubscribe_hub, None
            unsubscribe()
        self.withdraw_where(APP_QUIT)
        if self._handlers:
            await asyncio.wait(set(self._handlers), timeout=2)
        for task in list(self._handlers):
            task.cancel()
        for follower in list(self._followers.values()):
            await follower.stop()
        self._followers.clear()
        owned = [self.socket_path]
        if self.origin is None:
            owned.append(protocol.token_path(self._environ))
        for path in owned:
            with contextlib.suppress(OSError):
                path.unlink()
        log.info("terminal hooks: stopped")
        self._log_limit.remove()

    async def __aenter__(self) -> TerminalHookServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- one hook call -------------------------------------------------------------------

    async def _on_connection(self, connection: HookConnection) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            await self._serve(connection)
        except (ConnectionError, asyncio.IncompleteReadError):
            log.info("terminal hooks: a hook hung up")
        except Exception:
            log.exception("terminal hooks: a hook call failed")
        finally:
            if task is not None:
                self._handlers.discard(task)

    async def _serve(self, connection: HookConnection) -> None:
        if not self._token:
            return
        try:
            sealer, reader, writer, message = await accept_hook(
                connection, self._token, self._handshake_timeout)
        except Refused as exc:
            self.refused += 1
            self.timed_out += isinstance(exc, TooSlow)
            return
        try:
            agent, event = parse_hook_event(message)
            cli = None if self.origin else peer_cli(writer.get_extra_info("socket"))
            request = self._request_for(agent, event, cli)
        except ValueError as exc:  # (suggestions that are not a list: `parse_suggestions`)
            log.warning("terminal hooks: refused a malformed request: %s", exc)
            await send(writer, sealer, {"type": protocol.PASS, "reason": "malformed request"})
            return
        wait = self._wait_seconds()
        waiting: dict[str, Any] = {"type": protocol.WAITING, "wait_seconds": wait}
        streamed = None
        if self.origin is not None and sealer.version >= 3:
            waiting[protocol.WATCH_TRANSCRIPT] = True  # we cannot read the host's files
            waiting[protocol.TRANSCRIPT_FROM] = self.remote_transcripts.shown_up_to(
                request.session_id)
            streamed = self.remote_transcripts
        await send(writer, sealer, waiting)
        decision = await self.ask(
            request, within=wait,
            gone=lambda: hook_leaves(reader, sealer, request.session_id, streamed),
            expired=f"Nobody answered in Qoder Desktop within {wait:g} s; the terminal "
                    "asks instead.")
        if is_withdrawn(decision):
            await send(writer, sealer, {"type": protocol.PASS, "reason": decision.message})
            return
        answer = self.answer_for(request, decision)
        await send(writer, sealer, {"type": protocol.ANSWER, "output": answer.result})
        if answer.removals and await printed(reader, sealer):
            self.delivered(answer)

    def _wait_seconds(self) -> float:
        return float(self._wait() if callable(self._wait) else self._wait)

    def _request_for(self, agent: str, event: dict[str, Any],
                     cli: CliProcess | None = None) -> ApprovalRequest:
        """The request, in the app's session its hook proves it belongs to (`binding`)."""
        cwd = str(event.get("cwd") or "")
        path = event.get("transcript_path")
        host = self.origin.host if self.origin else None
        transcript = checked_transcript(agent, event["session_id"], cwd, path, cli) if (
            path and host is None) else None
        app_id = self.bindings.resolve(event["session_id"],
                                       Binding(agent, transcript, cli, host))
        info = self._hub.terminal_session(app_id, TerminalAgent(agent).label, cwd,
                                          event.get("permission_mode"), host=host)
        if self._follow and transcript is not None:
            self._follow_transcript(info.session_id, transcript, cli)
        return self.request_for(
            SessionRef(info.session_id, info.name, Backend.TERMINAL, cwd=cwd or None,
                       host=host),
            ToolCall(event["tool_name"], event["tool_input"],
                     suggestions=event.get("permission_suggestions")))

    def _hub_changed(self, event: HubEvent) -> None:
        """A session the hub forgot (it ended long ago, see `agents.ended_sessions`):
        let go of its resting transcript follower, its streamed transcript and its
        binding, so a week of terminal sessions does not keep one of each."""
        if event.kind is not HubEventKind.FORGOTTEN:
            return
        follower = self._followers.get(event.session_id)
        if follower is not None and not follower.following:
            del self._followers[event.session_id]
        self.remote_transcripts.forget(event.session_id)
        self.bindings.forget(event.session_id)

    def transcript_follower(self, session_id: str) -> TranscriptFollower | None:
        """The follower of the app's session `session_id`'s transcript, if one is followed."""
        return self._followers.get(session_id)

    def _follow_transcript(self, session_id: str, path: Path, cli: CliProcess | None) -> None:
        """Follow the checked transcript `path` while its CLI runs (again, from where
        it rested, on a later request); its results withdraw requests of `session_id`
        only (the app's session it is bound to)."""
        follower = self._followers.get(session_id)
        if follower is None:
            follower = self._new_follower(session_id, path)
            self._followers[session_id] = follower
        follower.bind_writer(cli.alive if cli is not None else None)
        if not follower.following:
            follower.poll()
            follower.start()

    def _new_follower(self, session_id: str, path: Path) -> TranscriptFollower:
        def result_seen(tool_name: str, tool_input: dict[str, Any]) -> None:
            self.withdraw_where(
                ANSWERED_IN_TERMINAL, lambda request: (
                    request.session_id == session_id and request.tool_name == tool_name
                    and request.tool_input == tool_input), first_only=True)

        def rested(why: Rest) -> None:
            if why is Rest.CLI_EXITED:
                self._hub.state_changed(session_id, SessionState.STOPPED, None)

        return TranscriptFollower(
            path, session_id, self._hub.add_transcript_line, result_seen, on_rest=rested,
            busy=lambda: any(request.session_id == session_id
                             for request in self.open_requests()))
