"""The paired devices behind the Away tests: the real `DeviceRegistry` over the test's
database, its keys in the test's in-memory keyring."""

from __future__ import annotations

import keyring
from helpers.memory_keyring import MemoryKeyring

from qoder_desktop.away.devices import DeviceRegistry
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.store.database import Database


def away_secrets() -> SecretStore:
    """The secret store over the test's in-memory keyring (the autouse fixture's)."""
    return SecretStore(keyring.get_keyring(), extra_allowed=(MemoryKeyring,))


async def device_registry(db: Database) -> DeviceRegistry:
    """A loaded registry over `db`."""
    registry = DeviceRegistry(db, away_secrets())
    await registry.load()
    return registry
