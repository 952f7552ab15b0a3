"""The paired devices behind the Away tests.

`devices(db)` gives the real `DeviceRegistry` over the test's database once
`qoder_desktop/away/devices.py` exists; until then an in-memory stand-in with the
contract's interface (docs/AWAY-PROTOCOL.md), so the server's tests run meanwhile.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class StandInDevice:
    """The contract's `Device`."""

    device_id: str
    name: str
    public_key: bytes
    paired_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def label(self) -> str:
        """"Pixel 7 (3f9a1c)"."""
        return f"{self.name} ({self.device_id[:6]})"


class StandInRegistry:
    """The contract's `DeviceRegistry`, in memory."""

    def __init__(self) -> None:
        self._devices: dict[str, StandInDevice] = {}
        self._listeners: list[Callable[[], None]] = []

    async def load(self) -> None:
        """Nothing to load."""

    def get(self, device_id: str) -> StandInDevice | None:
        """The device with `device_id`."""
        return self._devices.get(device_id)

    def devices(self) -> list[StandInDevice]:
        """Every device."""
        return list(self._devices.values())

    async def add(self, name: str, public_key: bytes) -> StandInDevice:
        """Add a paired device."""
        device = StandInDevice(secrets.token_hex(16), name, public_key, datetime.now(UTC))
        self._devices[device.device_id] = device
        self._tell()
        return device

    async def revoke(self, device_id: str) -> bool:
        """Revoke a device."""
        device = self._devices.get(device_id)
        if device is None or device.revoked_at is not None:
            return False
        self._devices[device_id] = replace(device, revoked_at=datetime.now(UTC))
        self._tell()
        return True

    async def touch(self, device_id: str) -> None:
        """Note a use."""
        device = self._devices.get(device_id)
        if device is not None:
            self._devices[device_id] = replace(device, last_used_at=datetime.now(UTC))

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Hear every change."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    def _tell(self) -> None:
        for listener in list(self._listeners):
            listener()


async def device_registry(db: Any) -> Any:
    """The real registry over `db` when away-core's module is there, else the stand-in."""
    try:
        from qoder_desktop.away.devices import DeviceRegistry  # type: ignore[import-not-found]
    except ImportError:
        return StandInRegistry()
    registry = DeviceRegistry(db)
    await registry.load()
    return registry
