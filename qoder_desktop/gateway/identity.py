"""Is it us on the gateway's port? A challenge only the token holder can answer.

Port squatting: another local user who binds the gateway's port before the app does
receives every agent's bearer token and can answer "allow". When our port is taken,
`port_holder` asks whoever listens there for ``GET /qoder-desktop/identity?nonce=N``.
Our gateway answers ``HMAC-SHA256(token, N)`` (the token itself never leaves; the
route needs no token); a squatter cannot, so anything else is "not us".
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import re
import secrets
from enum import StrEnum
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from qoder_desktop.gateway.contract import TokenSource, reveal_token

IDENTITY_PATH = "/qoder-desktop/identity"
_NONCE = re.compile(r"[0-9a-f]{32,64}")
_LABEL = b"qoder-desktop gateway identity:"
PROBE_TIMEOUT = 2.0


class PortHolder(StrEnum):
    """Who listens on a port."""

    FREE = "free"
    US = "us"
    """A Qoder Desktop gateway with our token (another instance of the app)."""
    OTHER = "other"
    """Something that could not prove it holds our token."""


def proof(token: str, nonce: str) -> str:
    """The answer to `nonce` that only a holder of `token` can give."""
    return hmac.new(token.encode(), _LABEL + nonce.encode(), hashlib.sha256).hexdigest()


class IdentityRoute:
    """ASGI wrapper: answers the identity challenge, passes everything else to `app`."""

    def __init__(self, app: ASGIApp, token: TokenSource) -> None:
        self._app = app
        self._token = token

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
    nonce = secrets.token_hex(16)
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except ConnectionRefusedError:
        return PortHolder.FREE
    except (OSError, TimeoutError):
        return PortHolder.OTHER
    try:
        writer.write(f"GET {IDENTITY_PATH}?nonce={nonce} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     "Connection: close\r\n\r\n".encode())
        await writer.drain()
        raw = await asyncio.wait_for(_read_all(reader), timeout)
        _head, _, body = raw.partition(b"\r\n\r\n")
        answer = json.loads(body or b"null")
        claimed = answer.get("proof") if isinstance(answer, dict) else None
    except (OSError, TimeoutError, ValueError):
        return PortHolder.OTHER
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    if isinstance(claimed, str) and hmac.compare_digest(claimed, proof(token, nonce)):
        return PortHolder.US
    return PortHolder.OTHER
