"""Is it us on the gateway's port? A challenge only the token holder can answer.

Port squatting: another local user who binds the gateway's port before the app does
receives every agent's bearer token and can answer "allow". When our port is taken,
`port_holder` asks whoever listens there for ``GET /qoder-desktop/identity?nonce=N``.
Our gateway answers ``HMAC-SHA256(token, N)`` (the token itself never leaves; the
route needs no token); a squatter cannot, so anything else is "not us".

Another copy of the app with another data folder may hold another token (no keyring:
one per run). It also answers ``HMAC-SHA256(run key, N)``, the key of its record in this
user's `instances.InstanceRegistry`; an asker that can read that record can check the
answer and say which copy it is. The data folder itself never goes over the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from qoder_desktop.gateway.contract import TokenSource, reveal_token
from qoder_desktop.gateway.instances import InstanceRegistry

if TYPE_CHECKING:  # the route serves with the HTTP stack (`http_stack`)
    from starlette.types import ASGIApp, Receive, Scope, Send

IDENTITY_PATH = "/qoder-desktop/identity"
_NONCE = re.compile(r"[0-9a-f]{32,64}")
_LABEL = b"qoder-desktop gateway identity:"
_INSTANCE_LABEL = b"qoder-desktop gateway instance:"
PROBE_TIMEOUT = 2.0
"""Seconds to connect to the port's holder."""
ANSWER_TIMEOUT = 10.0
"""Seconds for its answer: a gateway that has served no agent yet loads its HTTP stack
for this first connection (`first_connection`), which on a busy machine takes a while."""


class PortHolder(StrEnum):
    """Who listens on a port."""

    FREE = "free"
    US = "us"
    """A Qoder Desktop gateway with our token (another instance of the app)."""
    ANOTHER = "another"
    """Another copy of the app of this user, with another token: it proved the key of
    the port's record in the registry."""
    OTHER = "other"
    """Something that could not prove it holds our token or the port's record key."""


@dataclass(frozen=True)
class PortOwner:
    """Who listens on a port, and which copy of the app when it proved it.

    Attributes:
        holder: free, us, another copy, or something else.
        data_folder: the data folder of the copy that listens (US or ANOTHER with a
            record that it proved), else None.
    """

    holder: PortHolder
    data_folder: str | None = None


def proof(token: str, nonce: str) -> str:
    """The answer to `nonce` that only a holder of `token` can give."""
    return hmac.new(token.encode(), _LABEL + nonce.encode(), hashlib.sha256).hexdigest()


def instance_proof(key: str, nonce: str) -> str:
    """The answer to `nonce` that only the run with this record `key` can give."""
    return hmac.new(key.encode(), _INSTANCE_LABEL + nonce.encode(),
                    hashlib.sha256).hexdigest()


class IdentityRoute:
    """ASGI wrapper: answers the identity challenge, passes everything else to `app`.

    Args:
        app: the gateway's app.
        token: the gateway token (the answer proves it, never reveals it).
        instance_key: this run's record key (`instances`), or None.
    """

    def __init__(self, app: ASGIApp, token: TokenSource,
                 instance_key: str | None = None) -> None:
        self._app = app
        self._token = token
        self._instance_key = instance_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != IDENTITY_PATH:
            await self._app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        nonce = (query.get("nonce") or [""])[0]
        if scope.get("method") != "GET" or not _NONCE.fullmatch(nonce):
            status, body = 400, {"error": "expected GET with a hex nonce"}
        else:
            status = 200
            body = {"server": "qoder-desktop",
                    "proof": proof(reveal_token(self._token), nonce)}
            if self._instance_key:
                body["instance"] = instance_proof(self._instance_key, nonce)
        payload = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


async def _read_all(reader: asyncio.StreamReader, limit: int = 65536) -> bytes:
    data = b""
    while len(data) < limit:
        part = await reader.read(limit)
        if not part:
            break
        data += part
    return data


async def port_holder(host: str, port: int, token: str,
                      timeout: float = PROBE_TIMEOUT) -> PortHolder:
    """Who listens on `host:port`: nobody, a gateway with `token`, or something else.

    Sends only a fresh nonce, never the token.
    """
    return (await identify(host, port, token, timeout=timeout)).holder


async def identify(host: str, port: int, token: str, registry: InstanceRegistry | None = None,
                   timeout: float = PROBE_TIMEOUT,
                   answer_timeout: float = ANSWER_TIMEOUT) -> PortOwner:
    """Who listens on `host:port`, and which of this user's copies when it can prove it.

    Sends only a fresh nonce; waits `timeout` to connect and `answer_timeout` for the
    answer. The listener is ANOTHER copy (with its data folder) only
    when `registry` has a record for `port` and the answer carries the HMAC of our nonce
    under that record's key; a listener that proves `token` is US.
    """
    nonce = secrets.token_hex(16)
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except ConnectionRefusedError:
        return PortOwner(PortHolder.FREE)
    except (OSError, TimeoutError):
        return PortOwner(PortHolder.OTHER)
    try:
        writer.write(f"GET {IDENTITY_PATH}?nonce={nonce} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     "Connection: close\r\n\r\n".encode())
        await writer.drain()
        raw = await asyncio.wait_for(_read_all(reader), answer_timeout)
        _head, _, body = raw.partition(b"\r\n\r\n")
        answer = json.loads(body or b"null")
    except (OSError, TimeoutError, ValueError):
        return PortOwner(PortHolder.OTHER)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    if not isinstance(answer, dict):
        return PortOwner(PortHolder.OTHER)
    ours = _matches(answer.get("proof"), proof(token, nonce))
    record = await asyncio.to_thread(registry.lookup, port) if registry is not None else None
    folder = (record.data_folder if record is not None
              and _matches(answer.get("instance"), instance_proof(record.key, nonce)) else None)
    if ours:
        return PortOwner(PortHolder.US, folder)
    return PortOwner(PortHolder.ANOTHER, folder) if folder else PortOwner(PortHolder.OTHER)


def _matches(claimed: object, expected: str) -> bool:
    return isinstance(claimed, str) and hmac.compare_digest(claimed.encode(), expected.encode())
