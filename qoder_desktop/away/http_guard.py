"""The phone server's gate: the exact Host, the exact Origin, and the security headers.

Every request whose `Host` is not exactly the address the person chose gets 421 (a DNS
rebinding page reaches us under its own name); every POST and every WebSocket upgrade
whose `Origin` is not exactly the page's own origin gets 403 (a cross-site form or a
cross-site WebSocket). Every response, refusals and 404s included, carries the
contract's headers (docs/AWAY-PROTOCOL.md, "HTTP"). A plain ASGI middleware, Qt-free.
"""

from __future__ import annotations

import ipaddress
import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SECURITY_HEADERS", "HostGuard", "host_for_url"]

log = logging.getLogger(__name__)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
_SET_BY_US = frozenset(name for name, _value in SECURITY_HEADERS)
_DENIAL_EXTENSION = "websocket.http.response"


def host_for_url(host: str) -> str:
    """`host` as it stands in a URL and a Host header: an IPv6 literal in brackets."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host.lower()
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def _header(scope: Scope, name: bytes) -> str | None:
    values = [value for key, value in scope.get("headers", ()) if key.lower() == name]
    if len(values) != 1:
        return None  # (missing, or sent twice: never guess which one counts)
    return values[0].decode("latin-1")


class HostGuard:
    """ASGI middleware: exact Host (421), exact Origin on POST and WebSocket (403), and
    the security headers on every response.

    Args:
        app: the app behind the gate.
        authority: the exact `HOST:PORT` the Host header must be.
        origin: the exact origin POSTs and WebSockets must come from (None: no POST and no
            WebSocket is expected, every one is refused).
    """

    def __init__(self, app: ASGIApp, authority: str, origin: str | None) -> None:
        self._app = app
        self._authority = authority
        self._origin = origin
        self.refused_hosts = 0
        self.refused_origins = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse or pass on one request, adding the headers to what goes back."""
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        if _header(scope, b"host") != self._authority:
            self.refused_hosts += 1
            log.info("away mode: refused a request for another host name (421)")
            await self._refuse(scope, receive, send, 421, b"Misdirected request")
            return
        checks_origin = kind == "websocket" or scope.get("method") == "POST"
        if checks_origin and (self._origin is None
                              or _header(scope, b"origin") != self._origin):
            self.refused_origins += 1
            log.info("away mode: refused a request from another origin (403)")
            await self._refuse(scope, receive, send, 403, b"Forbidden")
            return
        await self._app(scope, receive, _with_headers(send))

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int,
                      body: bytes) -> None:
        headers = [*SECURITY_HEADERS, (b"content-type", b"text/plain; charset=utf-8"),
                   (b"content-length", str(len(body)).encode())]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if _DENIAL_EXTENSION in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": status,
                        "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:  # (the server answers a close before accept with 403)
            await send({"type": "websocket.close", "code": 1008})


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] in ("http.response.start", "websocket.http.response.start"):
            headers = [(name, value) for name, value in message.get("headers", ())
                       if name.lower() not in _SET_BY_US]
            message = {**message, "headers": [*headers, *SECURITY_HEADERS]}
        await send(message)

    return sending
