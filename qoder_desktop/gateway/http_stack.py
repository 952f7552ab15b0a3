"""The gateway's HTTP stack, loaded when the first agent connects (`first_connection`).

Everything here imports the web stack: uvicorn with h11, Starlette, sse-starlette and
multipart, and the ``mcp`` SDK's streamable-HTTP transport (~80 modules and ~4 MB a
session that never meets an agent does not need). `gateway_server` builds the uvicorn
server of an `server.ApprovalGateway` on its listening socket: the MCP server with its
``approve`` tool, the bearer check (`BearerAuth`), the identity answer
(`identity.IdentityRoute`) and the limits of `limits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server as McpServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import Config
from uvicorn.server import Server

from qoder_desktop import __version__
from qoder_desktop.gateway.callers import Callers
from qoder_desktop.gateway.contract import (
    HTTP_CLOSED,
    INPUT_SCHEMA,
    LOOPBACK,
    MCP_PATH,
    SERVER_NAME,
    TOOL_NAME,
    TokenSource,
    reveal_token,
)
from qoder_desktop.gateway.identity import IdentityRoute
from qoder_desktop.gateway.limits import (
    ACCEPT_BATCH,
    KEEP_ALIVE_TIMEOUT,
    LISTEN_BACKLOG,
    ConnectionGuard,
)

log = logging.getLogger(__name__)

TRANSPORT_LOGGER = "mcp.server.streamable_http"
STANDALONE_WRITER_ERROR = "Error in standalone SSE writer"

Approve = Callable[[str, Any], Awaitable[dict[str, Any]]]
"""The gateway's answer to one ``approve`` call: (tool name, arguments) → result JSON."""


class BearerAuth:
    """ASGI middleware: only requests with the right bearer token pass (401 otherwise).

    It also gives each HTTP request an `asyncio.Event` (scope key
    ``qoder_desktop.http_closed``) that is set once the request is over, so a tool
    call can notice that its agent hung up.
    """

    def __init__(self, app: ASGIApp, token: TokenSource,
                 on_refused: Callable[[], None] | None = None) -> None:
        self.app = app
        self._token = token
        self._on_refused = on_refused

    def _refusal(self, scope: Scope) -> str | None:
        header = Headers(scope=scope).get("authorization")
        if header is None:
            return "no Authorization header"
        scheme, _, presented = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            return "not a bearer token"
        try:
            expected = reveal_token(self._token)
        except Exception:
            log.exception("the gateway token could not be read")
            return "the gateway token is unavailable"
        if not expected or not hmac.compare_digest(presented.strip().encode(), expected.encode()):
            return "wrong token"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        reason = self._refusal(scope)
        if reason is not None:
            host, port = scope.get("client") or ("?", 0)
            log.warning("approval gateway refused %s %s from %s:%s: %s", scope.get("method", "?"),
                        scope.get("path", "?"), host, port, reason)
            if self._on_refused is not None:
                self._on_refused()
            if scope["type"] == "http":
                response = JSONResponse(
                    {"error": "unauthorized",
                     "message": "Qoder Desktop's approval gateway needs the right bearer token."},
                    status_code=401, headers={"WWW-Authenticate": f'Bearer realm="{SERVER_NAME}"'})
                await response(scope, receive, send)
            return
        closed = asyncio.Event()
        scope[HTTP_CLOSED] = closed
        try:
            await self.app(scope, receive, send)
        finally:
            closed.set()


class SessionEndNoise(logging.Filter):
    """Drops the ``mcp`` SDK's (1.30) error record for the normal end of an MCP session.

    When a session ends (the client's DELETE, the idle timeout, the gateway stopping),
    the SDK's ``StreamableHTTPServerTransport.terminate()`` closes the receiving end of
    the session's GET event stream while that stream's writer task waits on it; the
    writer then meets ``anyio.ClosedResourceError`` and logs it with a traceback as
    "Error in standalone SSE writer". Nothing failed (later SDK versions treat it as an
    expected disconnect). Only that message with that exception is dropped (a debug
    line instead); any other error of the transport is logged as before.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """False for the standalone writer's closed-stream record, else True."""
        error = record.exc_info[1] if record.exc_info else None
        if record.msg == STANDALONE_WRITER_ERROR and isinstance(error, anyio.ClosedResourceError):
            log.debug("an MCP session's event stream closed with its session")
            return False
        return True


class QuietServer(Server):
    """uvicorn without signal handling (the host application owns SIGINT/SIGTERM) and,
    while it serves, without the SDK's traceback for a normal session end. Once it
    listens, the kernel may queue `LISTEN_BACKLOG` connections again (asyncio listens
    with uvicorn's ``backlog``, the accept batch)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        """Serve (uvicorn's own), with `SessionEndNoise` on the SDK's transport logger."""
        noise = SessionEndNoise()
        logger = logging.getLogger(TRANSPORT_LOGGER)
        logger.addFilter(noise)
        try:
            await super().serve(sockets)
        finally:
            logger.removeFilter(noise)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start, then the kernel's longer queue on the given sockets."""
        await super().startup(sockets)
        for sock in sockets or ():
            sock.listen(LISTEN_BACKLOG)


class _Endpoint:
    """The MCP endpoint as a plain ASGI app (so Starlette routes every method to it)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self._manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._manager.handle_request(scope, receive, send)


def mcp_endpoint(manager: StreamableHTTPSessionManager) -> ASGIApp:
    """The MCP endpoint as a plain ASGI app (so Starlette routes every method to it)."""
    return _Endpoint(manager)


def mcp_server(approve: Approve, callers: Callers) -> McpServer[Any, Any]:
    """The MCP server with the one tool, ``approve``, answered by `approve`."""
    server: McpServer[Any, Any] = McpServer(
        SERVER_NAME, version=__version__,
        instructions="Answers permission prompts through Qoder Desktop: pass this tool "
                     "to --permission-prompt-tool.", lifespan=callers.lifespan)

    @server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return [types.Tool(
            name=TOOL_NAME, title="Ask Qoder Desktop",
            description="Asks the person at Qoder Desktop whether a tool call may run; "
                        "returns the permission result as JSON text.",
            inputSchema=INPUT_SCHEMA)]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        result = await approve(name, arguments)
        return [types.TextContent(type="text", text=json.dumps(result))]

    return server


def gateway_server(mcp: McpServer[Any, Any], token: TokenSource, *, port: int,
                   guard: ConnectionGuard, idle_timeout: float | None, instance_key: str,
                   on_refused: Callable[[], None]) -> QuietServer:
    """The gateway's uvicorn server (not yet serving) for the socket on 127.0.0.1:`port`:
    the MCP endpoint behind the bearer check and the identity answer, with the guard's
    connection cap and header deadline."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{LOOPBACK}:*", "localhost:*"], allowed_origins=[])
    manager = StreamableHTTPSessionManager(
        mcp, security_settings=security, session_idle_timeout=idle_timeout)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(routes=[Route(MCP_PATH, endpoint=mcp_endpoint(manager))], lifespan=lifespan)
    secured = IdentityRoute(BearerAuth(app, token, on_refused=on_refused), token,
                            instance_key=instance_key)
    config = Config(secured, host=LOOPBACK, port=port,
                    lifespan="on", log_config=None, access_log=False,
                    log_level="warning", timeout_graceful_shutdown=2,
                    server_header=False, http=guard.protocol(),
                    timeout_keep_alive=KEEP_ALIVE_TIMEOUT, backlog=ACCEPT_BATCH,
                    ws="none")  # MCP needs no WebSocket: uvicorn's "auto" imports a library
    return QuietServer(config)
