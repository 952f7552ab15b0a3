"""The phones paired with this desk (SQLite ``devices``), each row authenticated.

The agent runs as the same user as the app and can write the SQLite file, so a row in
``devices`` proves nothing by itself. Each row carries an HMAC-SHA256 (`row_mac`) over
what makes it trusted — its id, name, public key, when it was paired and when it was
revoked — under a 32-byte key kept in the OS keyring only (made on first use). A row
whose MAC fails is never trusted: `DeviceRegistry.get` treats it as unknown and
`DeviceRegistry.devices` lists it with ``tampered=True`` for the Devices page.

Revocation is permanent. ``revoked_at`` is under the MAC, so clearing it breaks the row;
and the revoked ids are also kept in the keyring, so putting back a copy of the row from
before its revocation (whose MAC was valid then) is caught too.

Reads and writes go through the store's writer thread, keyring calls through the keyring
thread: the loop never waits on a disk or a keyring. `get` and `devices` answer from
memory. Qt-free.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key

from qoder_desktop.away.keyring_entries import (
    DEVICE_MAC_KEY_ENTRY,
    REVOKED_DEVICES_ENTRY,
    KeyringUnavailable,
    read_entry,
    write_entry,
)
from qoder_desktop.config.keyring_calls import keyring_call
from qoder_desktop.config.secrets import SecretStore, SecretStoreError
from qoder_desktop.store.database import Database, decode_optional_time, decode_time, encode_time
from qoder_desktop.text.visible import is_hidden

log = logging.getLogger(__name__)

NAME_LIMIT = 40
"""A device name's length at most (the pairing request's limit)."""
DEFAULT_NAME = "Phone"
_MAC_CONTEXT = "qoder-desktop device v1"
_T = TypeVar("_T")


@dataclass(frozen=True)
class Device:
    """One paired phone.

    Attributes:
        device_id: its id (random, 32 hex digits).
        name: the name it gave itself, cleaned of hidden characters.
        public_key: its ECDSA P-256 public key (SPKI DER).
        paired_at: when the person confirmed it at the desk.
        last_used_at: when it last answered or connected (None: never).
        revoked_at: when it was revoked (None: trusted).
        tampered: True when its row failed its check (written by someone other than the
            app); such a device is never trusted.
    """

    device_id: str
    name: str
    public_key: bytes
    paired_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    tampered: bool = False

    @property
    def label(self) -> str:
        """The name and the start of the id, e.g. ``"Pixel 7 (3f9a1c)"`` (as the ledger shows)."""
        return f"{self.name} ({self.device_id[:6]})"

    @property
    def trusted(self) -> bool:
        """True when its answers may count: not revoked and not tampered with."""
        return self.revoked_at is None and not self.tampered


def clean_name(name: str) -> str:
    """`name` without hidden or control characters, spaces collapsed, at most 40 long."""
    shown = "".join(" " if char.isspace() else char for char in name if
                    char.isspace() or not is_hidden(char))
    cleaned = re.sub(r" +", " ", shown).strip()[:NAME_LIMIT].strip()
    return cleaned or DEFAULT_NAME


def row_mac(key: bytes, device_id: str, name: str, public_key: bytes, paired_at: str,
            revoked_at: str | None) -> bytes:
    """The HMAC-SHA256 that makes a ``devices`` row trusted (times as stored)."""
    message = json.dumps([_MAC_CONTEXT, device_id, name,
                          base64.b64encode(public_key).decode("ascii"), paired_at, revoked_at],
                         ensure_ascii=False, separators=(",", ":"))
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def check_public_key(public_key: bytes) -> None:
    """Raise ValueError unless `public_key` is an ECDSA P-256 key as SPKI DER."""
    try:
        key = load_der_public_key(public_key)
    except (ValueError, TypeError):
        raise ValueError("The device's public key is not a valid SPKI key.") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve,
                                                                        ec.SECP256R1):
        raise ValueError("The device's public key is not an ECDSA P-256 key.")


@dataclass(frozen=True)
class _Keys:
    mac_key: bytes
    revoked: frozenset[str]


def _load_keys(store: SecretStore) -> _Keys:
    """The MAC key (made on first use) and the revoked ids, from the keyring (blocking)."""
    encoded = read_entry(store, DEVICE_MAC_KEY_ENTRY)
    key = _decode_key(encoded) if encoded else None
    if key is None:
        key = secrets.token_bytes(32)
        write_entry(store, DEVICE_MAC_KEY_ENTRY, base64.b64encode(key).decode("ascii"))
    return _Keys(key, _decode_revoked(read_entry(store, REVOKED_DEVICES_ENTRY)))


def _decode_key(encoded: str) -> bytes | None:
    try:
        key = base64.b64decode(encoded, validate=True)
    except ValueError:
        return None
    return key if len(key) == 32 else None


def _decode_revoked(text: str | None) -> frozenset[str]:
    if not text:
        return frozenset()
    try:
        ids = json.loads(text)
    except ValueError:
        ids = None
    if not isinstance(ids, list):
        raise KeyringUnavailable("Away mode's list of revoked phones in the keyring is "
                                 "damaged, so no phone can be trusted. Remove the entry "
                                 f"{REVOKED_DEVICES_ENTRY!r} and pair your phones again.")
    return frozenset(str(item) for item in ids)


class DeviceRegistry:
    """The paired phones: in memory for the loop, stored in SQLite, checked by MAC.

    Call `load` once before use; until then no device is known (nothing is trusted).

    Args:
        db: the app's store (its writer thread does the reads and writes).
        secrets: where the MAC key and the revoked ids live (the OS keyring).
    """

    def __init__(self, db: Database, secrets: SecretStore) -> None:
        self._db = db
        self._secrets = secrets
        self._keys: _Keys | None = None
        self._devices: dict[str, Device] = {}
        self._subscribers: list[Callable[[], None]] = []

    async def load(self) -> None:
        """Read the keys from the keyring and the rows from SQLite, checking each row.

        Raises:
            KeyringUnavailable: no trusted keyring, or it failed (nothing is trusted).
            StorageError: the store could not be read.
        """
        self._keys = await self._keyring(lambda: _load_keys(self._secrets),
                                         "read Away mode's device key")
        db = self._db
        rows = await db.writer.run(lambda: db.fetchall(
            "SELECT * FROM devices ORDER BY paired_at, device_id", what="reading devices"))
        self._devices = {row["device_id"]: self._checked(row) for row in rows}
        self._changed()

    async def _keyring(self, call: Callable[[], _T], what: str) -> _T:
        try:
            return await keyring_call(call, what)
        except SecretStoreError as exc:  # e.g. the keyring did not answer in time
            raise KeyringUnavailable(str(exc)) from None

    def _checked(self, row: sqlite3.Row) -> Device:
        """The row as a `Device`, marked tampered unless its MAC and revocation hold."""
        keys = self._keys
        assert keys is not None
        public_key = bytes(row["public_key"]) if isinstance(
            row["public_key"], bytes | bytearray | memoryview) else b""
        raw_name = str(row["name"])
        mac = row["mac"]
        expected = row_mac(keys.mac_key, str(row["device_id"]), raw_name, public_key,
                           str(row["paired_at"]), row["revoked_at"])
        authentic = isinstance(mac, bytes) and hmac.compare_digest(mac, expected)
        unrevoked = row["device_id"] in keys.revoked and row["revoked_at"] is None
        try:
            paired_at = decode_time(row["paired_at"])
            revoked_at = decode_optional_time(row["revoked_at"])
            last_used_at = decode_optional_time(row["last_used_at"])
        except (TypeError, ValueError):
            paired_at, revoked_at, last_used_at, authentic = datetime.now(UTC), None, None, False
        return Device(str(row["device_id"]), clean_name(raw_name), public_key, paired_at,
                      last_used_at, revoked_at, tampered=not authentic or unrevoked)

    def get(self, device_id: str) -> Device | None:
        """The device with this id (revoked ones included), or None when it is unknown,
        its row was tampered with, or `load` has not run."""
        device = self._devices.get(device_id)
        return None if device is None or device.tampered else device

    def devices(self) -> list[Device]:
        """Every device in the order paired, tampered rows included (marked)."""
        return list(self._devices.values())

    async def add(self, name: str, public_key: bytes) -> Device:
        """Keep a newly paired phone (the person confirmed it at the desk).

        Raises:
            ValueError: the key is not an ECDSA P-256 SPKI key.
            RuntimeError: `load` has not run.
            StorageError: the store could not write it.
        """
        keys = self._loaded()
        check_public_key(public_key)
        device = Device(secrets.token_hex(16), clean_name(name), bytes(public_key),
                        datetime.now(UTC), None, None)
        paired_at = encode_time(device.paired_at)
        mac = row_mac(keys.mac_key, device.device_id, device.name, device.public_key,
                      paired_at, None)
        db = self._db
        await db.writer.run(lambda: db.execute(
            """INSERT INTO devices (device_id, name, public_key, paired_at, last_used_at,
                   revoked_at, mac) VALUES (?, ?, ?, ?, NULL, NULL, ?)""",
            (device.device_id, device.name, device.public_key, paired_at, mac),
            what="saving a paired phone"))
        self._devices[device.device_id] = device
        self._changed()
        return device

    async def revoke(self, device_id: str) -> bool:
        """Revoke a device for good; True if it was trusted until now.

        The id goes into the keyring's revoked list first, then the row is marked; a
        tampered row is revoked too (it becomes an honest revoked row).

        Raises:
            KeyringUnavailable: the keyring failed (the device is then not revoked).
            StorageError: the store could not write the row (the keyring holds it revoked).
        """
        keys = self._loaded()
        device = self._devices.get(device_id)
        if device is None or (device.revoked_at is not None and not device.tampered):
            return False
        was_trusted = device.trusted
        if device_id not in keys.revoked:
            revoked = keys.revoked | {device_id}
            text = json.dumps(sorted(revoked))
            await self._keyring(lambda: write_entry(self._secrets, REVOKED_DEVICES_ENTRY, text),
                                "keep the revoked phone in the keyring")
            keys = self._keys = replace(keys, revoked=revoked)
        now = datetime.now(UTC)
        stored_at = encode_time(device.paired_at)
        revoked_at = encode_time(now)
        mac = row_mac(keys.mac_key, device_id, device.name, device.public_key, stored_at,
                      revoked_at)
        db = self._db
        await db.writer.run(lambda: db.execute(
            """INSERT INTO devices (device_id, name, public_key, paired_at, last_used_at,
                   revoked_at, mac) VALUES (?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(device_id) DO UPDATE SET name = excluded.name,
                   public_key = excluded.public_key, paired_at = excluded.paired_at,
                   revoked_at = excluded.revoked_at, mac = excluded.mac""",
            (device_id, device.name, device.public_key, stored_at,
             encode_time(device.last_used_at) if device.last_used_at else None,
             revoked_at, mac), what="revoking a phone"))
        self._devices[device_id] = replace(device, revoked_at=now, tampered=False)
        self._changed()
        return was_trusted

    async def touch(self, device_id: str) -> None:
        """Note that the device was just used (its last use is not under the MAC)."""
        device = self._devices.get(device_id)
        if device is None or device.tampered:
            return
        now = datetime.now(UTC)
        db = self._db
        await db.writer.run(lambda: db.execute(
            "UPDATE devices SET last_used_at = ? WHERE device_id = ?",
            (encode_time(now), device_id), what="noting a phone's last use"))
        self._devices[device_id] = replace(device, last_used_at=now)
        self._changed()

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` (on the loop) after each change; returns the unsubscribe."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _loaded(self) -> _Keys:
        if self._keys is None:
            raise RuntimeError("The device list is not loaded yet (call load() first).")
        return self._keys

    def _changed(self) -> None:
        for callback in list(self._subscribers):
            try:
                callback()
            except Exception:
                log.exception("a device list subscriber failed")
