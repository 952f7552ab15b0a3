"""The hook command: hands a terminal agent's permission prompt to the running app.

Claude Code and qodercli run ``<python> -m qoder_desktop hook permission-request
--agent <agent>`` right before they show their own prompt, with the request as JSON on
stdin. We pass it to the app over the per-user socket (see `protocol`), wait for the
person, and print the decision for the CLI.

Before anything leaves the hook, the listener must prove that it holds this run's
token (a challenge over our nonce; the token is never sent), and every line after that
is sealed: a process that put its own listener at the socket's path, or relays to the
app, cannot make us print an answer.

The agent's own prompt is never lost: when the app is not running, refuses us, fails
the challenge, speaks another protocol version, sends something we do not understand,
or nobody answers in time, we print nothing and exit 0 at once, so the CLI asks in the
terminal exactly as without us. Nothing is ever allowed
for want of an answer. SIGTERM (the person answered No or Esc in the terminal, or quit
the CLI) tells the app the request is withdrawn.

When the app asks (a remote host's hook: the app cannot read the host's files), the
hook also follows its session's transcript while it waits (`transcript_watch`): once the
CLI writes the result of the call (the person answered Yes in the terminal), it tells
the app the request was answered there, prints nothing and exits.

Stdlib only, no Qt, no SDK, no pydantic: this runs for every prompt and must start fast.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from typing import IO, Any

from qoder_desktop.domain import hook_events
from qoder_desktop.terminal import protocol, transcript_watch

CONNECT_TIMEOUT = 2.0
"""How long the app may take to accept the connection."""
CONNECT_RETRY = 0.01
"""Seconds between tries while the app's queue of connections is full."""
CHALLENGE_TIMEOUT = 2.0
"""How long the app may take to prove it holds the token."""
ACK_TIMEOUT = 10.0
"""How long the app may take to say it is asking a person."""
ANSWER_SLACK = 5.0
"""Extra time past the app's own wait before we stop waiting for it."""
STDIN_TIMEOUT = 10.0
"""How long the CLI may take to hand over the request on stdin."""
WATCH_POLL = 0.1
"""Seconds between looks at the transcript while the app asks a person."""
EVENT = hook_events.HookEvent.PERMISSION_REQUEST


class _Terminated(Exception):
    """The CLI sent SIGTERM/SIGHUP/SIGINT: it no longer wants our answer."""


def _on_signal(_signum: int, _frame: object) -> None:
    raise _Terminated


def read_event(fd: int = 0, timeout: float = STDIN_TIMEOUT) -> dict[str, Any] | None:
    """The hook input on `fd` (one JSON object), or None when it is missing or malformed."""
    buffer = b""
    while len(buffer) <= protocol.MAX_LINE:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
        if buffer.rstrip().endswith(b"}"):
            event = _parse(buffer)
            if event is not None:
                return event
    return _parse(buffer) if len(buffer) <= protocol.MAX_LINE else None


def _parse(data: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return event if isinstance(event, dict) else None


def ask_app(agent: str, event: dict[str, Any],
            environ: Mapping[str, str] | None = None,
            emit: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any] | None:
    """The output to print for `event`, or None to let the terminal ask.

    The app must first prove it holds the token (see `protocol`); the token itself is
    never sent. `emit` prints the output while the connection is still open, so the app
    learns that the answer (and the rule removals it carries) reached the CLI.

    Raises:
        _Terminated: a signal arrived (the request is withdrawn first).
    """
    try:
        token = protocol.token_path(environ).read_text(encoding="utf-8").strip()
    except OSError:
        return None  # the app is not running (or never ran)
    transcript = transcript_watch.transcript_of(event)
    started_at = transcript_watch.size_now(transcript)  # what is written later is new
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sealer: _Session | None = None
    try:
        _connect(sock, str(protocol.socket_path(environ)))
        reader = sock.makefile("rb")
        sealer = _handshake(sock, reader, token)
        if sealer is None:
            return None
        hook_proof = protocol.hook_proof(token, sealer.server_nonce, sealer.hook_nonce)
        sock.sendall(sealer.seal(protocol.request_message(hook_proof, agent, event)))
        sock.settimeout(ACK_TIMEOUT)
        message = sealer.open(reader.readline(protocol.MAX_LINE))
        if message.get("type") == protocol.WAITING:
            wait = max(float(message.get("wait_seconds", 0)), 0.0) + ANSWER_SLACK
            stream_from = message.get(protocol.TRANSCRIPT_FROM)
            watch = _watch(event, transcript, started_at, stream_from if isinstance(
                stream_from, int) else None) if message.get(protocol.WATCH_TRANSCRIPT) else None
            if watch is None:
                sock.settimeout(wait)
                message = sealer.open(reader.readline(protocol.MAX_LINE))
            else:
                found = _await_answer(sock, reader, sealer, time.monotonic() + wait, watch)
                if found is None:  # answered in the terminal: the app withdraws
                    sock.settimeout(ACK_TIMEOUT)
                    sock.sendall(sealer.seal({"type": protocol.WITHDRAW,
                                              protocol.ANSWERED: True}))
                    return None
                message = found
        output = message.get("output")
        if message.get("type") != protocol.ANSWER or not isinstance(output, dict):
            return None
        if emit is not None:
            emit(output)
            sock.settimeout(ACK_TIMEOUT)
            sock.sendall(sealer.seal({"type": protocol.PRINTED}))
        return output
    except _Terminated:
        if sealer is not None:
            try:
                sock.settimeout(0.2)
                sock.sendall(sealer.seal({"type": protocol.WITHDRAW}))
            except OSError:
                pass
        raise
    except protocol.ProofError as exc:
        _say(f"not answering from {protocol.socket_path(environ)}: {exc}")
        return None
    except (OSError, ValueError, TypeError):
        return None  # refused, closed, timed out or garbled: the terminal asks
    finally:
        sock.close()


def _watch(event: dict[str, Any], path: str | None, started_at: int | None,
           stream_from: int | None) -> transcript_watch.TranscriptWatch | None:
    """A watch on `event`'s transcript `path` for its call's result (new since
    `started_at`), keeping lines from `stream_from` for the app; None: no usable path."""
    tool_name, tool_input = event.get("tool_name"), event.get("tool_input")
    if path is None or not isinstance(tool_name, str) or not isinstance(tool_input, dict):
        return None
    return transcript_watch.TranscriptWatch(path, tool_name, tool_input, started_at,
                                            stream_from)


def _await_answer(sock: socket.socket, reader: IO[bytes], sealer: _Session,
                  deadline: float, watch: transcript_watch.TranscriptWatch
                  ) -> dict[str, Any] | None:
    """The app's next message, or None once the transcript shows the call answered;
    meanwhile the transcript's lines go to the app.

    Raises:
        OSError: the app did not answer by `deadline` (``TimeoutError``) or hung up.
    """
    while True:
        sock.settimeout(0.0)
        try:
            ready = bool(reader.peek(1))  # type: ignore[attr-defined]
        except BlockingIOError:
            ready = False
        if not ready:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from the app")
            readable, _, _ = select.select([sock], [], [], min(left, WATCH_POLL))
            ready = bool(readable)
        if ready:
            sock.settimeout(max(deadline - time.monotonic(), ACK_TIMEOUT))
            return sealer.open(reader.readline(protocol.MAX_LINE))
        answered = watch.poll()
        while lines := watch.take_lines():  # what the app shows of the session
            sock.settimeout(ACK_TIMEOUT)
            sock.sendall(sealer.seal({"type": protocol.TRANSCRIPT, "lines": lines}))
        if answered:
            return None


def _connect(sock: socket.socket, path: str) -> None:
    """Connect within `CONNECT_TIMEOUT`. A Unix socket with a timeout fails at once when
    the app's queue of connections is full (another process may be flooding it while the
    app clears it), so that is tried again until the timeout.

    Raises:
        OSError: no connection (the app is not running, or stayed full).
    """
    deadline = time.monotonic() + CONNECT_TIMEOUT
    sock.settimeout(CONNECT_TIMEOUT)
    while True:
        try:
            sock.connect(path)
            return
        except BlockingIOError:
            if time.monotonic() + CONNECT_RETRY > deadline:
                raise
            time.sleep(CONNECT_RETRY)


def _handshake(sock: socket.socket, reader: IO[bytes], token: str) -> _Session | None:
    """Send our nonce; the sealer once the app proved it holds `token`, else None.

    Raises:
        protocol.ProofError: the listener answered with a wrong proof.
    """
    hook_nonce = protocol.new_nonce()
    sock.sendall(protocol.encode({"hello": protocol.HELLO, "version": protocol.VERSION,
                                  "nonce": hook_nonce}))
    sock.settimeout(CHALLENGE_TIMEOUT)
    line = reader.readline(protocol.MAX_LINE)
    if not line:
        _say("the app closed the connection without answering the challenge (a Qoder "
             "Desktop older than this hook?); the terminal asks instead")
        return None
    challenge = protocol.decode(line)
    version = challenge.get("version")
    if challenge.get("type") != protocol.CHALLENGE or version != protocol.VERSION:
        _say(f"the app speaks hook protocol {version!r}, this hook {protocol.VERSION}; "
             "restart Qoder Desktop or the agent so both are the same version")
        return None
    server_nonce = challenge.get("nonce")
    if not protocol.valid_nonce(server_nonce) or not protocol.proof_matches(
            challenge.get("proof"), protocol.server_proof(token, hook_nonce, str(server_nonce))):
        raise protocol.ProofError("the listener could not prove it is Qoder Desktop")
    return _Session(token, hook_nonce, str(server_nonce))


class _Session(protocol.Sealer):
    """A connection whose app proved it holds the token."""

    def __init__(self, token: str, hook_nonce: str, server_nonce: str) -> None:
        super().__init__(token, hook_nonce, server_nonce, sending=protocol.TO_APP,
                         receiving=protocol.TO_HOOK)
        self.hook_nonce = hook_nonce
        self.server_nonce = server_nonce


def _say(text: str) -> None:
    """One line on stderr (the CLI keeps it in its debug log; the terminal asks as usual)."""
    try:
        sys.stderr.write(f"qoder-desktop hook: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _print(output: dict[str, Any], stdout: IO[str] | None = None) -> None:
    out = sys.stdout if stdout is None else stdout
    out.write(json.dumps(output) + "\n")
    out.flush()


def run(agent: str, *, stdin_fd: int = 0, stdout: IO[str] | None = None,
        environ: Mapping[str, str] | None = None) -> int:
    """Answer one PermissionRequest hook call; always exits 0."""
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, _on_signal)
    try:
        event = read_event(stdin_fd)
        if event is None or event.get("hook_event_name", EVENT) != EVENT:
            return 0
        ask_app(agent, event, environ, emit=lambda output: _print(output, stdout))
    except _Terminated:
        return 0
    return 0


_HOOK_HELP = """\
usage: qoder-desktop hook permission-request [--agent claude|qoder]

The PermissionRequest hook itself. Claude Code or qodercli runs it right before it
would show its own permission prompt, with the request as JSON on stdin; it asks the
running Qoder Desktop and prints the person's answer for the CLI. When the app is not
running, or anything goes wrong, it prints nothing and the CLI asks in the terminal
as usual. People do not run it: `qoder-desktop hooks install` puts it in the agents'
settings.
"""


def hook_main(argv: list[str]) -> int:
    """``qoder-desktop hook permission-request --agent claude|qoder``."""
    if any(word in ("-h", "--help") for word in argv):
        sys.stdout.write(_HOOK_HELP)
        return 0
    if argv[:1] != list(hook_events.HOOK_COMMAND[1:]):
        sys.stderr.write(_HOOK_HELP)
        return 0  # a hook that fails must not block the CLI's own prompt
    agent = hook_events.TerminalAgent.CLAUDE.value
    if hook_events.AGENT_OPTION in argv[1:]:
        index = argv.index(hook_events.AGENT_OPTION)
        if index + 1 < len(argv):
            agent = argv[index + 1]
    return run(agent)
