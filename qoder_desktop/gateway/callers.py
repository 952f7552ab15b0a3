"""Who calls the gateway: one external session per MCP session (one agent run).

Each MCP session gets its own session in the hub, named by its ``clientInfo``, with the
client's first ``file://`` root as its cwd; a grant made for one agent run never reaches
another that happens to have the same client name. Revoked rules that run was not yet
told to drop travel with its next allow (the store records them as delivered).

The caller lives in the MCP session's own lifespan context (the ``mcp`` SDK enters the
server's lifespan once per session and leaves it when the session ends: the client's
DELETE, the idle timeout, the gateway stopping), so its hub session ends with it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import anyio
from mcp import types
from mcp.shared.message import ServerMessageMetadata

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.domain.models import SessionState
from qoder_desktop.gateway.contract import client_label

log = logging.getLogger(__name__)

ROOTS_TIMEOUT = 2.0
"""How long to wait for the client's roots (its working directory) once per session."""


@dataclass
class Caller:
    """One MCP session (one agent run): its session in the hub."""

    name: str
    cwd: str | None
    session_id: str


class CallerSlot:
    """One MCP session's lifespan context: its caller, once its first call named it."""

    def __init__(self) -> None:
        self.caller: Caller | None = None


class Callers:
    """The caller of each live MCP session; its hub session ends with the MCP session."""

    def __init__(self, hub: SessionHub) -> None:
        self._hub = hub

    @contextlib.asynccontextmanager
    async def lifespan(self, _server: Any) -> AsyncIterator[CallerSlot]:
        """The lifespan of one MCP session (the ``mcp`` server's ``lifespan``): its
        external session shows as stopped once the MCP session is gone."""
        slot = CallerSlot()
        try:
            yield slot
        finally:
            if slot.caller is not None:
                self._hub.state_changed(slot.caller.session_id, SessionState.STOPPED, None)

    async def of(self, context: Any) -> Caller:
        """The caller of this request's MCP session, opening its external session once."""
        slot: CallerSlot = context.lifespan_context
        if slot.caller is None:
            session = context.session
            params = session.client_params
            client = params.clientInfo if params else None
            name = client_label(client.name if client else None,
                                client.version if client else None)
            cwd = await client_cwd(context)
            if slot.caller is None:  # a parallel first call may have named it meanwhile
                info = self._hub.external_session(name, cwd or "")
                slot.caller = Caller(name, cwd, info.session_id)
        return slot.caller


async def client_cwd(context: Any) -> str | None:
    """The client's first ``file://`` root, if it offers roots and answers in time."""
    session = context.session
    if not session.check_client_capability(types.ClientCapabilities(
            roots=types.RootsCapability())):
        return None
    try:
        with anyio.fail_after(ROOTS_TIMEOUT):
            result = await session.send_request(
                types.ServerRequest(types.ListRootsRequest()), types.ListRootsResult,
                metadata=ServerMessageMetadata(related_request_id=context.request_id))
    except Exception as exc:
        log.info("approval gateway: the client's roots are unknown (%s)", type(exc).__name__)
        return None
    for root in result.roots:
        parts = urlsplit(str(root.uri))
        if parts.scheme == "file" and parts.path:
            return url2pathname(parts.path)
    return None
