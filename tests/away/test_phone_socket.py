"""One phone socket's outbox and nonces (its WebSocket side is driven in test_phones)."""

from __future__ import annotations

from typing import Any

import pytest

from qoder_desktop.away.phone_socket import CLOSE_TRY_LATER, MAX_QUEUED, PhoneSocket


@pytest.mark.asyncio
async def test_a_phone_that_stops_reading_is_closed_not_buffered_forever() -> None:
    phone = PhoneSocket(websocket=None)  # type: ignore[arg-type]  (never sent to here)
    for number in range(MAX_QUEUED + 5):
        phone.send({"type": "added", "n": number})
    queued: list[tuple[dict[str, Any] | None, int | None]] = []
    while not phone.outbox.empty():
        queued.append(phone.outbox.get_nowait())
    assert sum(code is None for _message, code in queued) == MAX_QUEUED
    assert queued[MAX_QUEUED] == (None, CLOSE_TRY_LATER)


@pytest.mark.asyncio
async def test_each_socket_shows_a_request_with_its_own_nonce() -> None:
    one, two = PhoneSocket(websocket=None), PhoneSocket(websocket=None)  # type: ignore[arg-type]
    shown = {"id": "req-1", "nonce": "", "summary": "npm test"}
    first, second = one.view("req-1", shown), two.view("req-1", shown)
    assert first["nonce"] and second["nonce"] and first["nonce"] != second["nonce"]
    assert shown["nonce"] == ""  # (the shared view is not changed)
    assert one.nonces.take("req-1", first["nonce"])
