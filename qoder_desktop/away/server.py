"""The phone server: HTTPS + WebSocket (Starlette on uvicorn, on the app's loop), bound to
exactly the address the person chose, and a plain-HTTP helper on the next port.

HTTPS (`ServerIdentity.ssl_context()`, the desk's own CA) serves only: `GET /` (the
page), `GET /static/<file>` (the page's files, package data in `away/page/`), `POST
/api/pair` (a pairing claim, rate limited) and the WebSocket `/ws` (`phones.Phones`).
Everything passes `http_guard.HostGuard` first (exact Host, exact Origin, the security
headers). The plain-HTTP listener on PORT+1 serves only the CA certificate (public) and a
static page with its fingerprint and the install steps; nothing there authorises
anything. The wire protocol is docs/AWAY-PROTOCOL.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import html
import json
import logging
import re
import socket
import time
from collections import deque
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp
from uvicorn.config import Config
from uvicorn.server import Server

from qoder_desktop.away.http_guard import HostGuard, host_for_url
from qoder_desktop.away.pairing import PairingRefused, Pairings
from qoder_desktop.away.phones import Phones
from qoder_desktop.away.signed import SignedRefused, b64url_decode
from qoder_desktop.gateway.serving import wait_until_served

__all__ = ["MAX_CLAIMS_PER_MINUTE", "AwayError", "AwayServer", "PageFiles", "QuietServer", "bind"]

log = logging.getLogger(__name__)

MAX_CLAIMS_PER_MINUTE = 10
MAX_PAIR_BODY = 4096
MAX_WS_MESSAGE = 64 * 1024
"""The largest WebSocket message a phone may send (answers are small)."""
MAX_CONNECTIONS = 64
"""Open HTTP connections at most (uvicorn answers 503 beyond)."""
WS_PROTOCOL = "websockets-sansio"
"""uvicorn's WebSocket protocol for the phone's socket (uvicorn imports it by name)."""
HTTP_PROTOCOL = "auto"
LIFESPAN = "off"
PAGE_PACKAGE = "qoder_desktop.away"
PAGE_FOLDER = "page"
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
          ".json": "application/json", ".webmanifest": "application/manifest+json",
          ".ico": "image/x-icon", ".txt": "text/plain; charset=utf-8"}


class AwayError(RuntimeError):
    """Away mode could not start; the text is a sentence for the person."""


class QuietServer(Server):
    """uvicorn without signal handling (the app owns SIGINT/SIGTERM), whose shutdown
    drops the connections left once Away mode has said goodbye to its phones."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop listening, drop every connection still open, and wait (at most the
        graceful timeout) for the requests they carried to end.

        By now `Phones.close_all` has sent each phone its going-away close. What is
        left is a browser's idle keep-alive HTTPS connection, which it does not answer
        the TLS goodbye on (uvicorn's polite close waited out its graceful timeout and
        logged an error), or a phone socket already closing, on which uvicorn's own
        shutdown sends a second close and fails with websockets' `InvalidState`.
        Nothing the person is waiting for travels on either, so they are aborted.
        """
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.transport.abort()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.config.timeout_graceful_shutdown or 0)
        while ((self.server_state.connections or self.server_state.tasks)
               and loop.time() < deadline):
            await asyncio.sleep(0.01)
        for task in list(self.server_state.tasks):
            task.cancel()
        if self.server_state.tasks:
            await asyncio.wait(list(self.server_state.tasks), timeout=1)
        for server in self.servers:
            await server.wait_closed()


def bind(address: str, port: int) -> socket.socket:
    """A listening TCP socket on exactly `address:port`, its connections without Nagle's
    delay: asyncio sets `TCP_NODELAY` only on sockets whose `proto` is `IPPROTO_TCP`, and a
    socket made with `proto` 0 left a small message waiting 40 ms for the phone's delayed
    ACK (`benchmarks/bench_away.py`).

    Raises:
        AwayError: the port is taken, or the address is not one of this machine's.
    """
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((address, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            raise AwayError(f"Port {port} on {address} is already in use, so Away mode could "
                            "not start. Choose another port.") from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise AwayError(f"{address} is not an address of this computer, so Away mode "
                            "cannot listen on it. Choose one of this computer's networks."
                            ) from None
        raise AwayError(f"Away mode could not listen on {address}:{port}: "
                        f"{exc.strerror or exc}") from None
    return sock


def bind_pair(address: str, port: int) -> tuple[socket.socket, socket.socket]:
    """The HTTPS socket on `port` and the plain one on the next port (port 0: a free
    pair)."""
    for _attempt in range(20 if port == 0 else 1):
        first = bind(address, port)
        try:
            return first, bind(address, first.getsockname()[1] + 1)
        except AwayError:
            first.close()
            if port != 0:
                raise
    raise AwayError(f"Away mode found no two free ports side by side on {address}.")


class PageFiles:
    """The phone page's files (package data), read once each; a missing one is None."""

    def __init__(self, root: Traversable | None = None) -> None:
        self._root = root if root is not None else resources.files(PAGE_PACKAGE).joinpath(
            PAGE_FOLDER)
        self._cache: dict[str, bytes | None] = {}

    def read(self, name: str) -> bytes | None:
        """The bytes of `name` (a plain file name in the page folder), or None."""
        if not _FILE_NAME.match(name) or ".." in name:
            return None
        if name not in self._cache:
            entry = self._root.joinpath(name)
            try:
                self._cache[name] = entry.read_bytes() if entry.is_file() else None
            except OSError:
                self._cache[name] = None
        return self._cache[name]


def _file_response(files: PageFiles, name: str) -> Response:
    data = files.read(name)
    if data is None:
        return Response("Not found", status_code=404, media_type="text/plain")
    suffix = name[name.rfind("."):] if "." in name else ""
    return Response(data, media_type=_TYPES.get(suffix, "application/octet-stream"))


class _ClaimLimit:
    """At most `MAX_CLAIMS_PER_MINUTE` pairing claims in any minute."""

    def __init__(self, per_minute: int = MAX_CLAIMS_PER_MINUTE) -> None:
        self._per_minute = per_minute
        self._times: deque[float] = deque()

    def allow(self) -> bool:
        now = time.monotonic()
        while self._times and now - self._times[0] > 60:
            self._times.popleft()
        if len(self._times) >= self._per_minute:
            return False
        self._times.append(now)
        return True


def instructions_page(url: str, ca_url: str, fingerprint: str, desk_name: str) -> bytes:
    """The plain page with the CA's fingerprint and the install steps (no script)."""
    e = html.escape
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Qoder Desktop — trust this desk</title></head>
<body>
<h1>Trust {e(desk_name)} on this phone</h1>
<p>Away mode's page is served over HTTPS with a certificate from this desk's own
certificate authority. Install it once, then open <b>{e(url)}</b>.</p>
<p>Certificate: <a href="{e(ca_url)}">desk-ca.crt</a><br>
SHA-256 fingerprint (check it matches what the desk shows):<br><code>{e(fingerprint)}</code></p>
<h2>Android</h2>
<ol>
<li>Tap <a href="{e(ca_url)}">desk-ca.crt</a> in Chrome; it downloads.</li>
<li>Settings → Security &amp; privacy → More security settings → Encryption &amp; credentials →
Install a certificate → CA certificate → Install anyway, and pick desk-ca.crt.</li>
<li>Under Trusted credentials → User, check that the fingerprint is the one above.</li>
<li>Open {e(url)} and scan the pairing code the desk shows.</li>
</ol>
<h2>iPhone and iPad</h2>
<ol>
<li>Open <a href="{e(ca_url)}">desk-ca.crt</a> in Safari and allow the profile download.</li>
<li>Settings → General → VPN &amp; Device Management → the Qoder Desktop profile → Install.</li>
<li>Settings → General → About → Certificate Trust Settings → turn on full trust for it.</li>
<li>Open {e(url)} in Safari and scan the pairing code the desk shows.</li>
</ol>
<p>This certificate can only vouch for private and local addresses. Remove it when you
no longer use Away mode.</p>
</body></html>
""".encode()


class AwayServer:
    """The HTTPS + WebSocket server and its plain-HTTP helper, on the running loop.

    Args:
        phones: the phone sockets' desk side.
        pairings: the pairing offer (`POST /api/pair` claims it).
        ssl_context: TLS for the HTTPS listener (`ServerIdentity.ssl_context()`).
        host: the address or name the person chose (the exact Host and Origin).
        bind_address: the address to listen on (the host's, resolved).
        port: the HTTPS port (0: a free one); the helper listens on the next one.
        ca_pem: the desk's CA certificate (public).
        fingerprint: its SHA-256 fingerprint, as phones show it.
        desk_name: this desk's name.
    """

    def __init__(self, phones: Phones, pairings: Pairings, ssl_context: Any, *, host: str,
                 bind_address: str, port: int, ca_pem: bytes, fingerprint: str,
                 desk_name: str, files: PageFiles | None = None) -> None:
        self._phones = phones
        self._pairings = pairings
        self._ssl = ssl_context
        self._host = host
        self._bind_address = bind_address
        self._requested_port = port
        self._ca_pem = ca_pem
        self._fingerprint = fingerprint
        self._desk_name = desk_name
        self._files = files or PageFiles()
        self._claims = _ClaimLimit()
        self._servers: list[tuple[QuietServer, asyncio.Task[None]]] = []
        self.port = port
        self.guard: HostGuard | None = None

    @property
    def url(self) -> str:
        """The page's origin, `https://HOST:PORT`."""
        return f"https://{host_for_url(self._host)}:{self.port}"

    @property
    def ca_url(self) -> str:
        """Where a phone downloads the CA certificate (plain HTTP, next port)."""
        return f"http://{host_for_url(self._host)}:{self.port + 1}/desk-ca.crt"

    # -- the apps --------------------------------------------------------------------

    def _page_app(self) -> ASGIApp:
        files = self._files

        async def index(_request: Request) -> Response:
            return _file_response(files, "index.html")

        async def static(request: Request) -> Response:
            return _file_response(files, str(request.path_params["name"]))

        app = Starlette(routes=[
            Route("/", index, methods=["GET"]),
            Route("/static/{name}", static, methods=["GET"]),
            Route("/api/pair", self._pair, methods=["POST"]),
            WebSocketRoute("/ws", self._phones.serve),
        ])
        authority = f"{host_for_url(self._host)}:{self.port}"
        self.guard = HostGuard(app, authority, f"https://{authority}")
        return self.guard

    def _helper_app(self) -> ASGIApp:
        page = instructions_page(self.url, self.ca_url, self._fingerprint, self._desk_name)

        async def index(_request: Request) -> Response:
            return Response(page, media_type="text/html; charset=utf-8")

        async def certificate(_request: Request) -> Response:
            return Response(self._ca_pem, media_type="application/x-x509-ca-cert", headers={
                "content-disposition": 'attachment; filename="desk-ca.crt"'})

        app = Starlette(routes=[Route("/", index, methods=["GET"]),
                                Route("/desk-ca.crt", certificate, methods=["GET"])])
        return HostGuard(app, f"{host_for_url(self._host)}:{self.port + 1}", None)

    async def _pair(self, request: Request) -> Response:
        """`POST /api/pair`: claim the pairing offer with the phone's public key."""
        if not self._claims.allow():
            return JSONResponse({"error": "Too many pairing attempts; wait a minute."},
                                status_code=429)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_PAIR_BODY:
                return JSONResponse({"error": "The request is too large."}, status_code=400)
        try:
            data = json.loads(body)
            token, key, name = data["token"], data["public_key"], data["name"]
            if not all(isinstance(value, str) for value in (token, key, name)):
                raise TypeError
            public_key = b64url_decode(key)
        except (ValueError, KeyError, TypeError, SignedRefused):
            return JSONResponse({"error": "Expected {token, public_key, name}."},
                                status_code=400)
        try:
            pending = self._pairings.claim(token, public_key, name)
        except PairingRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        return JSONResponse({"pairing_id": pending.pairing_id, "code": pending.code})

    # -- serving ---------------------------------------------------------------------

    async def start(self) -> None:
        """Listen on both ports and serve until `stop()`; returns once listening.

        Raises:
            AwayError: a port is taken or the address is not this machine's.
        """
        secure, plain = bind_pair(self._bind_address, self._requested_port)
        self.port = secure.getsockname()[1]
        common: dict[str, Any] = {
            "lifespan": LIFESPAN, "http": HTTP_PROTOCOL, "log_config": None, "access_log": False,
            "log_level": "warning", "server_header": False, "proxy_headers": False,
            "timeout_graceful_shutdown": 2, "limit_concurrency": MAX_CONNECTIONS,
            "timeout_keep_alive": 5}
        ssl_context = self._ssl
        configs = [
            (Config(self._page_app(), host=self._bind_address, port=self.port,
                    ws=WS_PROTOCOL, ws_max_size=MAX_WS_MESSAGE, ws_ping_interval=20,
                    ssl_context_factory=lambda _config, _default: ssl_context, **common),
             secure),
            (Config(self._helper_app(), host=self._bind_address, port=self.port + 1,
                    ws="none", **common), plain)]
        try:
            for config, sock in configs:
                server = QuietServer(config)
                task = asyncio.create_task(server.serve(sockets=[sock]),
                                           name="qoder-desktop-away-server")
                self._servers.append((server, task))
                while not server.started:
                    if task.done():
                        task.result()
                        raise AwayError("Away mode's server stopped while starting.")
                    await asyncio.sleep(0.01)
        except BaseException:
            await self.stop()
            secure.close()  # (once served, the loop's server owns and closes them)
            plain.close()
            raise
        log.info("away mode listening on %s (certificate help on port %d)", self.url,
                 self.port + 1)

    async def stop(self) -> None:
        """Stop both listeners and close every connection (idempotent)."""
        servers, self._servers = self._servers, []
        for server, _task in servers:
            server.should_exit = True
        for server, task in servers:
            await wait_until_served(server, task, "Away mode's server")
