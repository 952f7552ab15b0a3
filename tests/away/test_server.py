"""The phone server end to end over real TLS: pairing, answers reaching the broker as the
desk's Decisions, and every refusal (replays, tampering, unpaired keys, revoked devices,
other origins and host names) allowing nothing."""

from __future__ import annotations

import asyncio

import pytest
from helpers.away_rig import AwayRig, pair, phone_socket
from helpers.phone import Phone

from qoder_desktop.domain.models import DecisionKind


@pytest.mark.asyncio
async def test_a_paired_phone_allows_a_request(rig: AwayRig) -> None:
    phone = Phone()
    device = await pair(rig, phone)
    call = rig.ask("npm test")
    async with phone_socket(rig, phone) as client:
        [request] = await client.sign_in()
        assert request["summary"] == "npm test"
        result = await client.answer(request, "allow")
        assert result == {"type": "result", "id": request["id"], "ok": True, "reason": ""}
    decision = await asyncio.wait_for(call, 10)
    assert decision.kind is DecisionKind.ALLOW_ONCE
    assert decision.device == device.label
