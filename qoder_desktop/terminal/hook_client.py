"""The hook command: hands a terminal agent's permission prompt to the running app.

Claude Code and qodercli run ``<python> -m qoder_desktop hook permission-request
--agent <agent>`` right before they show their own prompt, with the request as JSON on
stdin. We pass it to the app over the per-user socket (see `protocol`), wait for the
person, and print the decision for the CLI.

The agent's own prompt is never lost: when the app is not running, refuses us, sends
something we do not understand, or nobody answers in time, we print nothing and exit 0
at once, so the CLI asks in the terminal exactly as without us. Nothing is ever allowed
for want of an answer. SIGTERM (the person answered No or Esc in the terminal, or quit
the CLI) tells the app the request is withdrawn.

Stdlib only, no Qt, no SDK, no pydantic: this runs for every prompt and must start fast.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from collections.abc import Mapping
from typing import IO, Any

from qoder_desktop.terminal import protocol

CONNECT_TIMEOUT = 2.0
"""How long the app may take to accept the connection."""
ACK_TIMEOUT = 10.0
"""How long the app may take to say it is asking a person."""
ANSWER_SLACK = 5.0
"""Extra time past the app's own wait before we stop waiting for it."""
STDIN_TIMEOUT = 10.0
"""How long the CLI may take to hand over the request on stdin."""
EVENT = "PermissionRequest"


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
            environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The output to print for `event`, or None to let the terminal ask.

    Raises:
        _Terminated: a signal arrived (the request is withdrawn first).
    """
    try:
        token = protocol.token_path(environ).read_text(encoding="utf-8").strip()
    except OSError:
        return None  # the app is not running (or never ran)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(str(protocol.socket_path(environ)))
        sock.sendall(token.encode("utf-8") + b"\n"
                     + protocol.encode({"agent": agent, "event": event}))
        reader = sock.makefile("rb")
        sock.settimeout(ACK_TIMEOUT)
        message = protocol.decode(reader.readline(protocol.MAX_LINE))
        if message.get("type") == protocol.WAITING:
            wait = float(message.get("wait_seconds", 0))
            sock.settimeout(max(wait, 0.0) + ANSWER_SLACK)
            message = protocol.decode(reader.readline(protocol.MAX_LINE))
        output = message.get("output")
        if message.get("type") == protocol.ANSWER and isinstance(output, dict):
            return output
        return None
    except _Terminated:
        try:
            sock.settimeout(0.2)
            sock.sendall(protocol.encode({"type": protocol.WITHDRAW}))
        except OSError:
            pass
        raise
    except (OSError, ValueError, TypeError):
        return None  # refused, closed, timed out or garbled: the terminal asks
    finally:
        sock.close()


def run(agent: str, *, stdin_fd: int = 0, stdout: IO[str] | None = None,
        environ: Mapping[str, str] | None = None) -> int:
    """Answer one PermissionRequest hook call; always exits 0."""
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, _on_signal)
    try:
        event = read_event(stdin_fd)
        if event is None or event.get("hook_event_name", EVENT) != EVENT:
            return 0
        output = ask_app(agent, event, environ)
    except _Terminated:
        return 0
    if output is not None:
        out = sys.stdout if stdout is None else stdout
        out.write(json.dumps(output) + "\n")
        out.flush()
    return 0


def hook_main(argv: list[str]) -> int:
    """``qoder-desktop hook permission-request --agent claude|qoder``."""
    if argv[:1] != ["permission-request"]:
        print("usage: qoder-desktop hook permission-request --agent claude|qoder",
              file=sys.stderr)
        return 0  # a hook that fails must not block the CLI's own prompt
    agent = "claude"
    if "--agent" in argv[1:]:
        index = argv.index("--agent")
        if index + 1 < len(argv):
            agent = argv[index + 1]
    return run(agent)
