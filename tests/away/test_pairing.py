"""Pairing: one offer, a single-use token, the same short code on both screens, and
trust only after the desk's confirmation."""

from __future__ import annotations

import pytest
from helpers.away_devices import device_registry
from helpers.phone import PAIRING_VECTOR, Phone

from qoder_desktop.away.pairing import (
    PairingRefused,
    Pairings,
    PendingPairing,
    short_code,
)
from qoder_desktop.store.database import Database

BASE = "https://desk.test:8765"


def test_the_contracts_test_vector() -> None:
    spki = bytes.fromhex(PAIRING_VECTOR["spki_hex"])
    assert short_code(PAIRING_VECTOR["token"], spki) == "2015 6466"


def test_the_phone_and_the_desk_compute_the_same_code() -> None:
    phone = Phone()
    assert short_code("tok", phone.spki) == phone.code("tok")
    assert short_code("tok", Phone().spki) != phone.code("tok")  # a swapped key
    assert short_code("tok2", phone.spki) != phone.code("tok")  # a swapped token


@pytest.mark.asyncio
async def test_only_the_desks_confirmation_trusts_the_phone(db: Database) -> None:
    devices = await device_registry(db)
    pairings = Pairings(devices)
    seen: list[PendingPairing | None] = []
    pairings.subscribe(seen.append)
    offer = pairings.offer(BASE)
    assert offer.url == f"{BASE}/#pair={offer.token}"
    assert offer.token not in repr(offer)
    phone = Phone()
    pending = pairings.claim(offer.token, phone.spki, "Pixel 7")
    assert pending.code == phone.code(offer.token)
    assert seen == [pending]
    assert devices.devices() == []  # not trusted yet
    outcome = pairings.outcome(pending.pairing_id)
    device = await pairings.confirm(pending.pairing_id)
    assert await outcome is device
    assert [d.device_id for d in devices.devices()] == [device.device_id]
    assert devices.get(device.device_id).public_key == phone.spki
    assert seen[-1] is None


@pytest.mark.asyncio
async def test_a_token_is_used_by_its_first_claim(db: Database) -> None:
    pairings = Pairings(await device_registry(db))
    offer = pairings.offer(BASE)
    pairings.claim(offer.token, Phone().spki, "Thief")
    with pytest.raises(PairingRefused) as refused:
        pairings.claim(offer.token, Phone().spki, "Pixel 7")
    assert refused.value.status == 403
    assert offer.token not in str(refused.value)


@pytest.mark.asyncio
async def test_a_wrong_token_is_refused_and_the_offer_stays(db: Database) -> None:
    pairings = Pairings(await device_registry(db))
    offer = pairings.offer(BASE)
    with pytest.raises(PairingRefused):
        pairings.claim("guess", Phone().spki, "Pixel 7")
    pairings.claim(offer.token, Phone().spki, "Pixel 7")


@pytest.mark.asyncio
async def test_an_expired_offer_is_refused(db: Database) -> None:
    now = [1000.0]
    pairings = Pairings(await device_registry(db), clock=lambda: now[0])
    offer = pairings.offer(BASE)
    now[0] += 301
    with pytest.raises(PairingRefused, match="expired"):
        pairings.claim(offer.token, Phone().spki, "Pixel 7")


@pytest.mark.asyncio
async def test_a_new_offer_ends_the_old_one(db: Database) -> None:
    pairings = Pairings(await device_registry(db))
    old = pairings.offer(BASE)
    pairings.offer(BASE)
    with pytest.raises(PairingRefused):
        pairings.claim(old.token, Phone().spki, "Pixel 7")


@pytest.mark.asyncio
@pytest.mark.parametrize("key, name", [(b"not a key", "Pixel 7"), (None, ""),
                                       (None, "x" * 41), (None, "Pixel\u202e7")])
async def test_a_malformed_key_or_name_is_400_and_keeps_the_offer(
        db: Database, key: bytes | None, name: str) -> None:
    pairings = Pairings(await device_registry(db))
    offer = pairings.offer(BASE)
    with pytest.raises(PairingRefused) as refused:
        pairings.claim(offer.token, key or Phone().spki, name)
    assert refused.value.status == 400
    pairings.claim(offer.token, Phone().spki, "Pixel 7")


@pytest.mark.asyncio
async def test_a_refused_claim_adds_nothing(db: Database) -> None:
    devices = await device_registry(db)
    pairings = Pairings(devices)
    pending = pairings.claim(pairings.offer(BASE).token, Phone().spki, "Pixel 7")
    outcome = pairings.outcome(pending.pairing_id)
    pairings.refuse(pending.pairing_id)
    assert await outcome is None
    with pytest.raises(PairingRefused):
        await pairings.confirm(pending.pairing_id)
    assert devices.devices() == []


@pytest.mark.asyncio
async def test_an_unconfirmed_claim_expires(db: Database) -> None:
    devices = await device_registry(db)
    pairings = Pairings(devices, ttl_s=0.05)
    pending = pairings.claim(pairings.offer(BASE).token, Phone().spki, "Pixel 7")
    assert await pairings.outcome(pending.pairing_id) is None
    with pytest.raises(PairingRefused):
        await pairings.confirm(pending.pairing_id)
    assert devices.devices() == []
