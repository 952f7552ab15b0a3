"""One phone's WebSocket: its device once signed in, its nonces, and its outbox.

Callbacks from the broker and the device registry never await: they queue messages
here, and one writer task per socket sends them in order (`write_outbox`). A phone that
stops reading is closed once `MAX_QUEUED` messages wait for it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from qoder_desktop.away.devices import Device
from qoder_desktop.away.signed import NonceBook

__all__ = ["CLOSE_GOING_AWAY", "CLOSE_REVOKED", "CLOSE_TRY_LATER", "CLOSE_UNAUTHORISED",
           "MAX_QUEUED", "PhoneSocket"]

MAX_QUEUED = 2000
"""Messages waiting for one phone at most; a phone that stops reading is closed."""
CLOSE_UNAUTHORISED = 4401
CLOSE_REVOKED = 4403
CLOSE_GOING_AWAY = 1001
CLOSE_TRY_LATER = 1013


@dataclass(eq=False)
class PhoneSocket:
    """One phone's WebSocket: its device once authenticated, its nonces, its outbox."""

    websocket: WebSocket
    nonces: NonceBook = field(default_factory=NonceBook)
    device: Device | None = None
    outbox: asyncio.Queue[tuple[dict[str, Any] | None, int | None]] = field(
        default_factory=asyncio.Queue)

    def send(self, message: dict[str, Any]) -> None:
        """Queue `message` for this phone (a phone that stops reading is closed)."""
        if self.outbox.qsize() >= MAX_QUEUED:
            self.close(CLOSE_TRY_LATER)
            return
        self.outbox.put_nowait((message, None))

    def close(self, code: int, message: dict[str, Any] | None = None) -> None:
        """Send `message` (if any), then close with `code`."""
        self.outbox.put_nowait((message, code))

    def view(self, request_id: str, shown: dict[str, Any]) -> dict[str, Any]:
        """A request's view (`shown`, the same for every phone) with this socket's nonce."""
        return {**shown, "nonce": self.nonces.issue(request_id)}

    def show(self, request_id: str, shown: dict[str, Any], kind: str) -> None:
        """Send a request's view as `kind` ("added" or "updated") with this socket's nonce."""
        self.send({"type": kind, "request": self.view(request_id, shown)})

    async def write_outbox(self) -> None:
        """Send what is queued, in order, until a close (the socket's one writer task)."""
        while True:
            message, code = await self.outbox.get()
            try:
                if message is not None:
                    await self.websocket.send_text(json.dumps(message))
                if code is not None:
                    await self.websocket.close(code)
                    return
            except (WebSocketDisconnect, RuntimeError, OSError):
                return

    async def receive(self) -> dict[str, Any]:
        """The next message as a dict ({} for anything else); raises WebSocketDisconnect."""
        text = await self.websocket.receive_text()
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        return message if isinstance(message, dict) else {}

    async def drain_until_close(self) -> None:
        """Read (and drop) what a waiting phone sends, until it hangs up."""
        try:
            while True:
                await self.websocket.receive_text()
        except (WebSocketDisconnect, RuntimeError):
            return
