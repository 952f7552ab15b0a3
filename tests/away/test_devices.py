"""Paired devices in a real SQLite file: rows the app did not write are never trusted."""

from __future__ import annotations

import sqlite3

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from helpers.memory_keyring import MemoryKeyring

from qoder_desktop.away.devices import DeviceRegistry
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.store.database import Database


def _phone_key() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def _registry(db: Database, keyring: MemoryKeyring) -> DeviceRegistry:
    return DeviceRegistry(db, SecretStore(keyring, extra_allowed=(MemoryKeyring,)))


def _agent_writes(db: Database, sql: str, params: tuple[object, ...] = ()) -> None:
    """What a process of the same user can do: open the file and write it directly."""
    db.flush()
    with sqlite3.connect(db.path) as conn:
        conn.execute(sql, params)


@pytest.mark.asyncio
async def test_a_paired_phone_is_kept_and_trusted_after_a_restart(
        db: Database, memory_keyring: MemoryKeyring) -> None:
    registry = _registry(db, memory_keyring)
    await registry.load()
    changes: list[int] = []
    unsubscribe = registry.subscribe(lambda: changes.append(len(registry.devices())))
    key = _phone_key()
    device = await registry.add("Pixel\u202e 7\x1b[2J", key)
    assert device.name == "Pixel 7[2J" and device.label == f"Pixel 7[2J ({device.device_id[:6]})"
    assert registry.get(device.device_id) == device and changes == [1]
    await registry.touch(device.device_id)
    assert changes == [1, 1]
    unsubscribe()

    again = _registry(db, memory_keyring)
    await again.load()
    loaded = again.get(device.device_id)
    assert loaded is not None and loaded.trusted and loaded.public_key == key
    assert loaded.last_used_at is not None and loaded.paired_at == device.paired_at


@pytest.mark.asyncio
async def test_a_row_the_agent_inserts_is_not_a_trusted_device(
        db: Database, memory_keyring: MemoryKeyring) -> None:
    registry = _registry(db, memory_keyring)
    await registry.load()
    genuine = await registry.add("My phone", _phone_key())
    _agent_writes(db, "INSERT INTO devices VALUES (?, ?, ?, ?, NULL, NULL, ?)",
                  ("f" * 32, "Agent", _phone_key(), genuine.paired_at.isoformat(), b"\0" * 32))
    _agent_writes(db, "UPDATE devices SET name = 'Renamed' WHERE device_id = ?",
                  (genuine.device_id,))
    reloaded = _registry(db, memory_keyring)
    await reloaded.load()
    assert reloaded.get("f" * 32) is None and reloaded.get(genuine.device_id) is None
    shown = {device.device_id: device for device in reloaded.devices()}
    assert shown["f" * 32].tampered and shown[genuine.device_id].tampered
    assert not any(device.trusted for device in shown.values())


@pytest.mark.asyncio
async def test_revocation_cannot_be_undone_by_editing_or_restoring_the_row(
        db: Database, memory_keyring: MemoryKeyring) -> None:
    registry = _registry(db, memory_keyring)
    await registry.load()
    device = await registry.add("Lost phone", _phone_key())
    db.flush()
    with sqlite3.connect(db.path) as conn:  # the agent keeps a copy from before
        before = conn.execute("SELECT * FROM devices WHERE device_id = ?",
                              (device.device_id,)).fetchone()
    changes: list[str] = []
    registry.subscribe(lambda: changes.append("changed"))
    assert await registry.revoke(device.device_id)
    assert changes == ["changed"]
    revoked = registry.get(device.device_id)
    assert revoked is not None and revoked.revoked_at is not None and not revoked.trusted
    assert not await registry.revoke(device.device_id)

    _agent_writes(db, "UPDATE devices SET revoked_at = NULL WHERE device_id = ?",
                  (device.device_id,))
    edited = _registry(db, memory_keyring)
    await edited.load()
    assert edited.get(device.device_id) is None and edited.devices()[0].tampered

    _agent_writes(db, "DELETE FROM devices WHERE device_id = ?", (device.device_id,))
    _agent_writes(db, "INSERT INTO devices VALUES (?, ?, ?, ?, ?, ?, ?)", tuple(before))
    restored = _registry(db, memory_keyring)
    await restored.load()
    assert restored.get(device.device_id) is None and restored.devices()[0].tampered


@pytest.mark.asyncio
async def test_a_wiped_keyring_trusts_no_earlier_device(
        db: Database, memory_keyring: MemoryKeyring) -> None:
    registry = _registry(db, memory_keyring)
    await registry.load()
    device = await registry.add("Phone", _phone_key())
    fresh = _registry(db, MemoryKeyring())
    await fresh.load()
    assert fresh.get(device.device_id) is None and fresh.devices()[0].tampered


@pytest.mark.asyncio
async def test_only_p256_keys_can_be_paired(db: Database,
                                            memory_keyring: MemoryKeyring) -> None:
    registry = _registry(db, memory_keyring)
    await registry.load()
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    for bad in (b"not a key", rsa_key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)):
        with pytest.raises(ValueError, match="public key"):
            await registry.add("Phone", bad)
    assert registry.devices() == []
