"""What the hook command and the app say to each other over the per-user local socket.

The app listens on a Unix socket ``hooks.sock`` in the user's runtime folder
(``$XDG_RUNTIME_DIR/qoder-desktop``, or ``$QODER_DESKTOP_HOME/runtime``), a folder only
the user can enter (0700), the socket 0600. At start it writes a random token to
``hooks.token`` (0600) next to it. One connection carries one permission request, as
lines of JSON (UTF-8, one object per line).

Neither side sends the token: each proves it holds it, so a process that put its own
listener at the socket's path learns nothing and cannot answer for the app.

1. hook → app: ``{"hello": "qoder-desktop-hook", "version": 2, "nonce": Nh}``;
2. app → hook: ``{"type": "challenge", "version": 2, "nonce": Ns, "proof": Ps}`` where
   ``Ps = HMAC-SHA256(token, SERVER_LABEL + Nh + ":" + Ns)``; the hook checks ``Ps``
   before it sends anything else (a wrong proof, another version or silence: the hook
   prints nothing and the terminal asks);
3. every further line is *sealed*: ``<mac> <json>``, the MAC taken with a key derived
   from the token and both nonces (`session_key`) over the direction, the line's number
   and the JSON bytes, so a listener that relays between the hook and the app can
   neither change nor replay a line;
4. hook → app (sealed): ``{"proof": Ph, "agent": "claude", "event": <hook stdin>}`` where
   ``Ph = HMAC-SHA256(token, HOOK_LABEL + Ns + ":" + Nh)`` (another label, so the app's
   proof can never stand in for the hook's, nor the other way round). ``proof`` is the
   line's first key, so the line starts with `proof_head` (`PROOF_HEAD_LENGTH` bytes):
   the app checks the proof there before it takes in the rest, up to `MAX_LINE` bytes
   (an unproven connection makes the app hold `HELLO_LIMIT` bytes at most, and the head);
5. app → hook (sealed): ``{"type": "waiting", "wait_seconds": N}`` — a person is being
   asked (to a hook of version 3 on a remote host, with ``"watch_transcript": true,
   "transcript_from": offset``: the app cannot read the host's transcript, so the hook
   follows it and sends its lines from that offset on); then
   ``{"type": "answer", "output": <what the hook prints>}`` or ``{"type": "pass",
   "reason": "..."}`` (print nothing: the CLI asks in the terminal);
6. hook → app (sealed), any time before the answer: ``{"type": "withdraw"}`` (the CLI
   took the request back; a connection that drops withdraws the request too), with
   ``"answered": true`` when the transcript shows the call answered in the terminal;
   while it waits, ``{"type": "transcript", "lines": [{"at": offset, "size": length,
   "text": line, "cut": true (only the head of a long line)}, …]}`` (asked for in
   ``waiting``);
   after it printed an answer: ``{"type": "printed"}`` (what the answer carried
   reached the CLI).

Versions: 3 added ``watch_transcript``, ``transcript_from``, ``transcript`` and
``answered``. The app answers a hello of any
version from `OLDEST_VERSION` on in the hook's own version, so hooks deployed before
(version 2) keep working; a hook speaks only its own version.

Stdlib only: the hook command imports this on its fast path.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
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
HELLO_LIMIT = 1024
"""The longest hello, and the most the app reads from a connection before its proof."""
TAG_LENGTH = 64
"""The length of a seal's MAC and of a proof (hex SHA-256)."""
_PROOF_KEY = b'{"proof":"'
PROOF_HEAD_LENGTH = TAG_LENGTH + 1 + len(_PROOF_KEY) + TAG_LENGTH + 1
"""The bytes of the request line that hold the hook's proof (see `proof_head`)."""

VERSION = 3
"""The protocol version; version 1 sent the token itself as the first line."""
OLDEST_VERSION = 2
"""The oldest hook version the app still answers (in that version)."""
HELLO = "qoder-desktop-hook"
CHALLENGE = "challenge"
WAITING = "waiting"
ANSWER = "answer"
PASS = "pass"
WITHDRAW = "withdraw"
PRINTED = "printed"
WATCH_TRANSCRIPT = "watch_transcript"
TRANSCRIPT_FROM = "transcript_from"
TRANSCRIPT = "transcript"
ANSWERED = "answered"

SERVER_LABEL = b"qoder-desktop hook server proof:"
HOOK_LABEL = b"qoder-desktop hook client proof:"
_SESSION_LABEL = b"qoder-desktop hook session key:"
TO_HOOK = b"app->hook"
TO_APP = b"hook->app"
_NONCE = re.compile(r"[0-9a-f]{32,64}")


class ProofError(ValueError):
    """The other side could not prove it holds the token, or a sealed line was altered."""


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


def new_nonce() -> str:
    """A fresh random nonce (hex)."""
    return os.urandom(16).hex()


def valid_nonce(value: object) -> bool:
    """True for a nonce in the form both sides send."""
    return isinstance(value, str) and _NONCE.fullmatch(value) is not None


def _mac(key: bytes, data: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def server_proof(token: str, hook_nonce: str, server_nonce: str) -> str:
    """The app's answer to the hook's nonce: only a holder of `token` can give it."""
    return _mac(token.encode(), SERVER_LABEL + f"{hook_nonce}:{server_nonce}".encode())


def hook_proof(token: str, server_nonce: str, hook_nonce: str) -> str:
    """The hook's answer to the app's nonce (another label than `server_proof`)."""
    return _mac(token.encode(), HOOK_LABEL + f"{server_nonce}:{hook_nonce}".encode())


def proof_matches(claimed: object, expected: str) -> bool:
    """Compare a claimed proof in constant time."""
    return isinstance(claimed, str) and hmac.compare_digest(claimed.encode(), expected.encode())


def request_message(proof: str, agent: str, event: Mapping[str, Any]) -> dict[str, Any]:
    """The hook's request (step 4), its proof first so the line starts with `proof_head`."""
    return {"proof": proof, "agent": agent, "event": event}


def proof_head(head: bytes) -> str | None:
    """The proof in the first `PROOF_HEAD_LENGTH` bytes of a sealed request line
    (``<mac> {"proof":"<proof>"``), or None when they are not in that form."""
    if len(head) != PROOF_HEAD_LENGTH or head[TAG_LENGTH:TAG_LENGTH + 1] != b" ":
        return None
    start = TAG_LENGTH + 1 + len(_PROOF_KEY)
    if head[TAG_LENGTH + 1:start] != _PROOF_KEY or head[-1:] != b'"':
        return None
    try:
        return head[start:-1].decode("ascii")
    except UnicodeDecodeError:
        return None


class Sealer:
    """Seals and opens the lines of one connection after the challenge.

    Args:
        token: the token both sides hold.
        hook_nonce, server_nonce: this connection's nonces.
        sending, receiving: the direction labels (`TO_HOOK`/`TO_APP`) of this side.
        version: the protocol version the connection speaks.
    """

    def __init__(self, token: str, hook_nonce: str, server_nonce: str, *,
                 sending: bytes, receiving: bytes, version: int = VERSION) -> None:
        self._key = hmac.new(token.encode(), _SESSION_LABEL
                             + f"{hook_nonce}:{server_nonce}".encode(), hashlib.sha256).digest()
        self._sending = sending
        self._receiving = receiving
        self.version = version
        """The protocol version this connection speaks."""
        self._sent = 0
        self._received = 0

    def __repr__(self) -> str:
        return f"Sealer(sent={self._sent}, received={self._received})"

    def _tag(self, direction: bytes, number: int, body: bytes) -> bytes:
        return _mac(self._key, direction + b"#" + str(number).encode() + b":" + body).encode()

    def seal(self, message: Mapping[str, Any]) -> bytes:
        """The next line to send, sealed."""
        body = encode(message)[:-1]
        tag = self._tag(self._sending, self._sent, body)
        self._sent += 1
        return tag + b" " + body + b"\n"

    def open(self, line: bytes) -> dict[str, Any]:
        """The message of the next received line.

        Raises:
            ProofError: the line is not the next line the other side sealed.
            ValueError: it holds no JSON object.
        """
        tag, _, body = line.rstrip(b"\n").partition(b" ")
        expected = self._tag(self._receiving, self._received, body)
        if not hmac.compare_digest(tag, expected):
            raise ProofError("a line was not sealed with this connection's key")
        self._received += 1
        return decode(body)
