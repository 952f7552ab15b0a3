"""What the hook command and the app say to each other over the per-user local socket.

The app listens on a Unix socket ``hooks.sock`` in the user's runtime folder
(``$XDG_RUNTIME_DIR/qoder-desktop``, or ``$QODER_DESKTOP_HOME/runtime``), a folder only
the user can enter (0700), the socket 0600. At start it writes a random token to
``hooks.token`` (0600) next to it. One connection carries one permission request, as
lines of JSON (UTF-8, one object per line):

1. hook → app: the token (a plain line);
2. hook → app: ``{"agent": "claude", "event": <the hook's stdin object>}``;
3. app → hook: ``{"type": "waiting", "wait_seconds": N}`` — a person is being asked;
4. app → hook: ``{"type": "answer", "output": <what the hook prints>}`` or
   ``{"type": "pass", "reason": "..."}`` (print nothing: the CLI asks in the terminal);
5. hook → app, any time: ``{"type": "withdraw"}`` (the CLI took the request back); a
   connection that drops withdraws the request too.

Stdlib only: the hook command imports this on its fast path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

APP_NAME = "qoder-desktop"
APP_AUTHOR = "Qoder"
HOME_ENV = "QODER_DESKTOP_HOME"
SOCKET_NAME = "hooks.sock"
TOKEN_NAME = "hooks.token"
MAX_LINE = 4 * 1024 * 1024
"""The longest line either side accepts (a Write of a big file is a big tool input)."""

WAITING = "waiting"
ANSWER = "answer"
PASS = "pass"
WITHDRAW = "withdraw"


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user folder of the socket and the token."""
    env = os.environ if environ is None else environ
    home = env.get(HOME_ENV, "").strip()
    if home:
        return Path(os.path.abspath(os.path.expanduser(home))) / "runtime"
    runtime = env.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / APP_NAME
    from platformdirs import user_runtime_path

    return user_runtime_path(APP_NAME, APP_AUTHOR)


def socket_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the app listens for hook requests."""
    return runtime_dir(environ) / SOCKET_NAME


def token_path(environ: Mapping[str, str] | None = None) -> Path:
    """The file holding this run's token (readable by the user only)."""
    return runtime_dir(environ) / TOKEN_NAME


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One protocol line back to an object.

    Raises:
        ValueError: the line is not a JSON object.
    """
    data = json.loads(line.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("a protocol line must hold a JSON object")
    return data
