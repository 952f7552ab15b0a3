"""The approval gateway: an MCP tool that answers permission prompts of agents started elsewhere.

``--permission-prompt-tool mcp__qoder-desktop__approve`` hands each prompt to our tool
``approve`` as ``{tool_name, input, tool_use_id}``. It becomes an `ApprovalRequest` of an
*external* session (one per MCP session, i.e. per agent run, named by its MCP
``clientInfo``; the cwd is the client's first root), goes through the same broker as
in-app sessions (rules, dialogs, ledger), and is answered with one text block holding
the permission result JSON (see `approval.source.permission_result`). The CLI applies
the ``updatedPermissions`` of that result, so it holds the grants of "allow for this
session" and stays the authority; a grant revoked in the app is removed from that
agent run with its next allow.

A streamable-HTTP MCP server (``mcp`` SDK, stateful sessions) in a Starlette app under
uvicorn, inside the app's asyncio loop, bound to 127.0.0.1 only. The socket listens from
`start()` on; that HTTP stack (`http_stack`) is loaded and started on it only when the
first agent connects (`first_connection`), since most sessions never meet one. Every
request needs ``Authorization: Bearer <token>``; others get a 401 and a log line with
the client address (never the presented token). Malformed arguments, an unknown tool
or any error give a deny, never an allow. An agent that hangs up, sends
``notifications/cancelled`` or ends its MCP session withdraws its pending request. A
person's answer is never timed out here; while it is awaited, progress notifications
keep idle clients waiting.

Idle sessions. An MCP session with no request in flight for `SESSION_IDLE_TIMEOUT` (a
day) is closed by the ``mcp`` SDK's session manager. Without any timeout, the session of
an agent that was killed (it never says goodbye) would stay, with its server task, until
the app quits; with the SDK's default of 30 minutes, an interactive agent that sits idle
over lunch would find its session gone. A call in flight keeps its session open however
long the person takes, so the timeout never decides a request. The wait for idleness is
an ``anyio.sleep_forever()`` (an infinite timer), which the app's loop
(``qoder_desktop.ui.event_loop.AppEventLoop``) accepts; plain qasync does not (it fails
to schedule an infinite timer).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.approval.source import ApprovalSource, SessionRef, is_withdrawn
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, RuleValue
from qoder_desktop.gateway.contract import (
    HTTP_CLOSED,
    LOOPBACK,
    TOOL_NAME,
    LazyGatewayToken,
    TokenSource,
    deny_result,
    gateway_url,
    permission_result,
    read_token,
    reveal_token,
    tool_call,
)
from qoder_desktop.gateway.first_connection import ServeOnFirstConnection, ServingState
from qoder_desktop.gateway.identity import PortHolder, identify
from qoder_desktop.gateway.instances import InstanceRegistry
from qoder_desktop.gateway.limits import (
    HEADER_TIMEOUT,
    MAX_CONNECTIONS,
    ConnectionGuard,
    gateway_log_limit,
)
from qoder_desktop.gateway.serving import (
    GatewayError as GatewayError,
)
from qoder_desktop.gateway.serving import (
    GatewayPortHeldByCopy,
    GatewayPortInUse,
    GatewayPortSquatted,
    bind_loopback,
)

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server as McpServer
    from uvicorn.server import Server

    from qoder_desktop.gateway.callers import Callers

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 20.0
"""How often a waiting call sends a progress notification (if the client asked)."""
SESSION_IDLE_TIMEOUT = 24 * 3600.0
"""An MCP session with no request in flight for this long is closed (a pending call
keeps its session open, however long the person takes); see the module docstring."""


# -- the gateway ----------------------------------------------------------------------


class ApprovalGateway(ApprovalSource):
    """Serves the ``approve`` MCP tool on 127.0.0.1 for agents started elsewhere: the way
    in for them (`ApprovalSource`).

    Args:
        broker: decides each request (rules, then a person).
        hub: opens the external session of each agent run (MCP session).
        token: the bearer token (or a function returning it).
        host: must be ``127.0.0.1``.
        port: the TCP port (``Settings.gateway_port``); 0 picks a free one.
        keepalive_seconds: interval of progress notifications while a person decides.
        session_idle_timeout: seconds an MCP session may go without a request in flight
            before it is closed (`SESSION_IDLE_TIMEOUT`); None keeps sessions until the
            client ends them or the gateway stops.
        max_connections: open connections at most; at the cap the oldest idle one goes
            (`gateway.limits`).
        header_timeout: seconds a connection may take to send a complete request head.
        data_folder: this copy's data folder (`instances.copy_folder`); with `registry`,
            the port is recorded there while serving, so another copy that finds the
            port taken can say which copy holds it.
        registry: this user's gateway records (`InstanceRegistry.default()`), or None.
    """

    def __init__(self, broker: ApprovalBroker, hub: SessionHub, token: TokenSource, *,
                 host: str = LOOPBACK, port: int = 8765,
                 keepalive_seconds: float = KEEPALIVE_SECONDS,
                 session_idle_timeout: float | None = SESSION_IDLE_TIMEOUT,
                 max_connections: int = MAX_CONNECTIONS,
                 header_timeout: float = HEADER_TIMEOUT,
                 data_folder: Path | None = None,
                 registry: InstanceRegistry | None = None) -> None:
        if host != LOOPBACK:
            raise ValueError(f"the approval gateway binds {LOOPBACK} only, not {host!r}")
        if not 0 <= port <= 65535:
            raise ValueError(f"not a TCP port: {port}")
        super().__init__(broker, hub)
        self._broker = broker
        self._hub = hub
        self._token = token
        self._host = host
        self._requested_port = port
        self._keepalive = keepalive_seconds
        self._idle_timeout = session_idle_timeout
        self._port: int | None = None
        self._max_connections = max_connections
        self._header_timeout = header_timeout
        self._log_limit = gateway_log_limit()
        self._data_folder = data_folder
        self._registry = registry
        self._instance_key = secrets.token_hex(32)
        """This run's record key: the identity answer proves it (`identity`)."""
        self._registered: int | None = None
        self.guard = ConnectionGuard(max_connections, header_timeout)
        """The connection cap and header deadline (renewed at each start)."""
        self._serving: ServeOnFirstConnection | None = None
        self._callers: Callers | None = None
        self._mcp: McpServer[Any, Any] | None = None
        """The MCP server, made with the HTTP stack at the first connection."""
        self.refused = 0
        """How many HTTP requests were refused for want of the right token."""

    # -- the way in (ApprovalSource) -------------------------------------------------------

    def encode(self, decision: Decision, removals: Sequence[RuleValue]) -> dict[str, Any]:
        """The ``--permission-prompt-tool`` result JSON (`permission_result`)."""
        return permission_result(decision, removals)

    # -- properties ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the gateway listens on (the real one when started with port 0)."""
        return self._port if self._port is not None else self._requested_port

    @property
    def url(self) -> str:
        """The MCP endpoint, e.g. ``http://127.0.0.1:8765/mcp``."""
        return gateway_url(self.port, self._host)

    @property
    def running(self) -> bool:
        """True between `start()` and `stop()`, unless the server failed to start."""
        return self._serving is not None and self._serving.running

    @property
    def state(self) -> ServingState:
        """Stopped; listening and waiting for the first agent; starting its HTTP server;
        serving; or failed (`first_connection`)."""
        return ServingState.STOPPED if self._serving is None else self._serving.state

    # -- life cycle ----------------------------------------------------------------------

    async def start(self, on_failure: Callable[[GatewayError], None] | None = None) -> None:
        """Listen on 127.0.0.1 until `stop()`; returns once listening. The HTTP server
        starts when the first agent connects (`first_connection`); if it cannot, the
        socket is closed and `on_failure` is told why.

        Raises:
            GatewayPortInUse: the port is taken.
            GatewayError: the gateway could not start for another reason.
        """
        if self._serving is not None:
            raise GatewayError("the approval gateway is already running")
        if not isinstance(self._token, LazyGatewayToken) and not reveal_token(self._token):
            raise GatewayError("the approval gateway has no token, so it will not start")
        try:
            sock = bind_loopback(self._host, self._requested_port)
        except GatewayPortInUse as exc:
            try:
                token = await read_token(self._token)
            except Exception as error:  # a silent or broken keyring
                raise GatewayError(f"the port {self._requested_port} is taken and the "
                                   f"gateway token could not be read ({error})") from exc
            owner = await identify(self._host, self._requested_port, token, self._registry)
            if owner.holder is PortHolder.OTHER:
                log.error("approval gateway: port %d is held by something that is not us",
                          self._requested_port)
                raise GatewayPortSquatted(self._requested_port, self._host) from exc
            if owner.data_folder is not None:
                log.warning("approval gateway: port %d is served by another Qoder Desktop "
                            "(data folder %s)", self._requested_port, owner.data_folder)
                raise GatewayPortHeldByCopy(self._requested_port, owner.data_folder,
                                            self._host) from exc
            raise
        self._port = sock.getsockname()[1]
        self.guard = ConnectionGuard(self._max_connections, self._header_timeout)
        serving = ServeOnFirstConnection(sock, self._load_server, "the approval gateway",
                                         on_failure=lambda error: self._failed(error, on_failure))
        try:
            serving.start()
        except BaseException:
            sock.close()
            raise
        self._serving = serving
        self._log_limit.install()
        if (self._registry is not None and self._data_folder is not None
                and await asyncio.to_thread(self._registry.register, self.port,
                                            self._data_folder, self._instance_key)):
            self._registered = self.port
            if self._serving is not serving:  # stopped while the record was written
                self._unregister()
                return
        log.info("approval gateway listening on %s", self.url)

    async def stop(self) -> None:
        """Stop listening or serving, in any state; pending external requests are
        withdrawn."""
        serving, self._serving = self._serving, None
        self._unregister()
        if serving is None:
            return
        self._log_limit.remove()
        await serving.stop()
        log.info("approval gateway stopped")

    def _unregister(self) -> None:
        if self._registry is not None and self._registered is not None:
            self._registry.unregister(self._registered, self._instance_key)
            self._registered = None

    def _failed(self, error: GatewayError,
                on_failure: Callable[[GatewayError], None] | None) -> None:
        """The HTTP server could not start: the socket is closed; say so."""
        self._unregister()
        if on_failure is not None:
            on_failure(error)

    async def _load_server(self) -> Server:
        """The token (read now if it was not), the HTTP stack (imported off the loop)
        and the gateway's server on it."""
        if not await read_token(self._token):
            raise GatewayError("the approval gateway has no token, so it will not serve")
        stack = await asyncio.to_thread(importlib.import_module,
                                        "qoder_desktop.gateway.http_stack")
        from qoder_desktop.gateway.callers import Callers  # (imported with the stack)

        self._callers = Callers(self._hub)
        self._mcp = stack.mcp_server(self._approve, self._callers)
        server: Server = stack.gateway_server(
            self._mcp, self._token, port=self.port, guard=self.guard,
            idle_timeout=self._idle_timeout, instance_key=self._instance_key,
            on_refused=self._count_refusal)
        return server

    async def __aenter__(self) -> ApprovalGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the MCP tool ------------------------------------------------------------------

    def _count_refusal(self) -> None:
        self.refused += 1

    async def _approve(self, name: str, arguments: Any) -> dict[str, Any]:
        """One permission prompt: a result JSON dict, never an allow on failure."""
        try:
            if name != TOOL_NAME:
                return deny_result(f"Qoder Desktop has no tool {name!r}; use {TOOL_NAME!r}.")
            try:
                call = tool_call(arguments)
            except ValueError as exc:
                log.warning("approval gateway: malformed permission prompt: %s", exc)
                return deny_result(f"Qoder Desktop refused a malformed permission prompt: {exc}. "
                                   "Expected {tool_name, input, tool_use_id}.")
            assert self._mcp is not None and self._callers is not None  # serving
            context = self._mcp.request_context
            caller = await self._callers.of(context)
            request = self.request_for(
                SessionRef(caller.session_id, caller.name, Backend.EXTERNAL, cwd=caller.cwd),
                call)
            decision = await self._decide(request, context)
            answer = self.answer_for(request, decision)
            self.delivered(answer)  # it goes back in this call's result
            return dict(answer.result)
        except Exception as exc:
            log.exception("approval gateway: a permission prompt failed")
            return deny_result(f"Qoder Desktop failed while asking: {exc}")

    async def _decide(self, request: ApprovalRequest, context: Any) -> Decision:
        """The broker's decision; withdrawn if the agent hung up first."""
        scope = getattr(context.request, "scope", None) or {}
        closed: asyncio.Event | None = scope.get(HTTP_CLOSED)
        token = getattr(context.meta, "progressToken", None) if context.meta else None
        keeping = (asyncio.ensure_future(self._keep_alive(context, token))
                   if token is not None and self._keepalive > 0 else None)
        try:
            decision = await self.ask(request, gone=(
                None if closed is None else lambda: _hung_up(closed)))
        finally:
            if keeping is not None:
                keeping.cancel()
        if is_withdrawn(decision):
            log.info("approval gateway: request %s withdrawn (%s)", request.request_id,
                     decision.message)
        return decision

    async def _keep_alive(self, context: Any, token: str | int) -> None:
        beat = 0
        while True:
            await anyio.sleep(self._keepalive)
            beat += 1
            try:
                await context.session.send_progress_notification(
                    token, progress=beat, message="Waiting for a person in Qoder Desktop",
                    related_request_id=str(context.request_id))
            except Exception:
                log.debug("approval gateway: a keep-alive could not be sent", exc_info=True)
                return


async def _hung_up(closed: asyncio.Event) -> str:
    """Return once the agent's HTTP request is over (it hung up)."""
    await closed.wait()
    return "The agent withdrew the request."
