"""A phone whose pairing the desk confirmed while its socket was not waiting (the click
came first, or the socket dropped and came back after it) still learns its device: it
signs in with its pairing id and the key that claimed it, and is told `paired`, then its
snapshot — until the offer's token would have expired; then it is told why it is refused.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.away_rig import AwayRig, PhoneClient, away_rig, claim_offer, phone_socket
from helpers.phone import Phone

from qoder_desktop.away.devices import Device
from qoder_desktop.domain.models import DecisionKind
from qoder_desktop.store.database import Database


async def sign_in_with_pairing_id(client: PhoneClient, phone: Phone, pairing_id: str
                                  ) -> dict[str, Any]:
    """hello → auth with the pairing id, signed by `phone`; the desk's first reply."""
    await client.hello()
    await client.send(phone.auth(client.challenge, device_id=pairing_id))
    return await client.receive()


@pytest.mark.asyncio
async def test_a_confirmation_before_the_phone_signs_in_still_pairs_it(rig: AwayRig) -> None:
    phone = Phone()
    pairing_id = (await claim_offer(rig, phone))["pairing_id"]
    device = await rig.mode.pairings.confirm(pairing_id)  # the desk's click came first
    call = rig.ask("npm test")
    async with phone_socket(rig, phone) as client:
        assert await sign_in_with_pairing_id(client, phone, pairing_id) == {
            "type": "paired", "device_id": device.device_id, "name": phone.name}
        phone.device_id = device.device_id
        [request] = (await client.receive_type("snapshot"))["requests"]
        assert (await client.answer(request, "allow"))["ok"]
    decision = await asyncio.wait_for(call, 10)
    assert (decision.kind, decision.device) == (DecisionKind.ALLOW_ONCE, device.label)


@pytest.mark.asyncio
async def test_a_phone_that_dropped_while_waiting_learns_its_device_on_return(
        rig: AwayRig) -> None:
    phone = Phone()
    pairing_id = (await claim_offer(rig, phone))["pairing_id"]
    async with phone_socket(rig, phone) as client:
        assert (await sign_in_with_pairing_id(client, phone, pairing_id))["state"] == "waiting"
    device = await rig.mode.pairings.confirm(pairing_id)  # while the phone was away
    for _ in range(2):  # and again, if it lost the first answer before storing it
        async with phone_socket(rig, phone) as client:
            paired = await sign_in_with_pairing_id(client, phone, pairing_id)
            assert paired["device_id"] == device.device_id
            assert (await client.receive())["type"] == "snapshot"
    assert rig.mode.refused() == []


@pytest.mark.asyncio
async def test_only_the_key_that_claimed_the_pairing_learns_its_device(rig: AwayRig) -> None:
    phone, other = Phone(), Phone()
    pairing_id = (await claim_offer(rig, phone))["pairing_id"]
    await rig.mode.pairings.confirm(pairing_id)
    async with phone_socket(rig, other) as client:
        assert await sign_in_with_pairing_id(client, other, pairing_id) == {
            "type": "refused", "reason": "bad signature"}
        assert await client.closed_with() == 4401


@pytest.mark.asyncio
async def test_a_device_revoked_before_its_phone_returned_is_refused(rig: AwayRig) -> None:
    phone = Phone()
    pairing_id = (await claim_offer(rig, phone))["pairing_id"]
    device: Device = await rig.mode.pairings.confirm(pairing_id)
    await rig.devices.revoke(device.device_id)
    async with phone_socket(rig, phone) as client:
        assert await sign_in_with_pairing_id(client, phone, pairing_id) == {
            "type": "refused", "reason": "revoked"}
        assert await client.closed_with() == 4403


@pytest.mark.asyncio
async def test_after_the_offers_lifetime_the_phone_is_told_the_pairing_ended(
        db: Database, tmp_path: Path) -> None:
    now = [time.time()]
    async with away_rig(db, tmp_path, clock=lambda: now[0]) as rig:
        phone = Phone()
        pairing_id = (await claim_offer(rig, phone))["pairing_id"]
        await rig.mode.pairings.confirm(pairing_id)
        now[0] += 5 * 60 + 1  # the offer's token would have expired
        async with phone_socket(rig, phone) as client:
            assert await sign_in_with_pairing_id(client, phone, pairing_id) == {
                "type": "refused", "reason": "pairing ended"}
            assert await client.closed_with() == 4401
        assert [r.reason for r in rig.mode.refused()] == ["pairing ended"]
