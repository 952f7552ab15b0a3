"""Away mode's core as the desk's controller sees it: the contract's interfaces
(docs/AWAY-PROTOCOL.md) as protocols, the factory that imports and builds the core the
first time Away mode is used (never at start-up), and the small translations the
Devices page needs (rows for the paired devices, whether an address is this machine's)."""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from qoder_desktop.ui.widgets.away import local_addresses

if TYPE_CHECKING:  # (the Devices page loads when first shown)
    from qoder_desktop.ui.windows.devices_page import DeviceRow


class Device(Protocol):
    """A paired device (`away.devices.Device`)."""

    @property
    def device_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def paired_at(self) -> datetime: ...
    @property
    def last_used_at(self) -> datetime | None: ...
    @property
    def revoked_at(self) -> datetime | None: ...


class Devices(Protocol):
    """The paired devices (`away.devices.DeviceRegistry`)."""

    def devices(self) -> list[Any]: ...
    async def revoke(self, device_id: str) -> bool: ...
    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]: ...


class Pairings(Protocol):
    """Pairing offers (`away.pairing.Pairings`)."""

    def offer(self, base_url: str) -> Any: ...
    async def confirm(self, pairing_id: str) -> Any: ...
    def refuse(self, pairing_id: str) -> None: ...
    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]: ...


class Mode(Protocol):
    """Away mode's state (`away.mode.AwayMode`)."""

    @property
    def pairings(self) -> Pairings: ...
    async def start(self, host: str, port: int = ..., *,
                    time_limit_s: float | None = ...) -> Any: ...
    async def stop(self, why: str) -> None: ...
    @property
    def status(self) -> Any: ...
    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]: ...
    def refused(self) -> list[Any]: ...


def refused_line(refused: Any) -> str:
    """A refused answer or sign-in (`away.phones.RefusedAnswer`) in words."""
    what = "a sign-in" if refused.request_id is None else "an answer"
    when = refused.at.astimezone().strftime("%H:%M:%S")
    return f"{when}: refused {what} from {refused.device} ({refused.reason})"


class AwayCore:
    """What `make_core` builds: Away mode, its devices and the error it raises with a
    sentence for the person (`away.mode.AwayError`)."""

    def __init__(self, mode: Mode, devices: Devices,
                 error: type[Exception] = RuntimeError) -> None:
        self.mode = mode
        self.devices = devices
        self.error = error


CoreFactory = Callable[[], Awaitable[AwayCore]]


def away_core_factory(broker: object, db: object, secrets: object,
                      data_dir: object, desk_name: str) -> CoreFactory:
    """Build Away mode's core from the app's broker, database, keyring and data folder
    (imported when first called, never at start-up)."""
    async def make() -> AwayCore:
        import importlib

        authority = importlib.import_module("qoder_desktop.away.authority")
        devices_module = importlib.import_module("qoder_desktop.away.devices")
        mode_module = importlib.import_module("qoder_desktop.away.mode")
        devices = devices_module.DeviceRegistry(db, secrets)
        await devices.load()
        mode = mode_module.AwayMode(
            broker, devices,
            lambda: authority.DeskAuthority.load_or_create(secrets, data_dir),
            desk_name=desk_name)
        return AwayCore(mode, devices, mode_module.AwayError)

    return make


def _when(moment: datetime | None) -> str:
    return "never" if moment is None else moment.astimezone().strftime("%d %b %H:%M")


def device_rows(devices: list[Any]) -> list[DeviceRow]:
    """The page's rows for the registry's devices, the ones that can answer first."""
    from qoder_desktop.ui.windows.devices_page import DeviceRow

    rows = [DeviceRow(device.device_id, device.label, _when(device.paired_at),
                      _when(device.last_used_at), not _trusted(device), _state(device))
            for device in devices]
    return sorted(rows, key=lambda row: row.revoked)


def _trusted(device: Any) -> bool:
    return device.revoked_at is None and not getattr(device, "tampered", False)


def _state(device: Any) -> str:
    if getattr(device, "tampered", False):
        return "not trusted: its record was changed outside the app"
    if device.revoked_at is not None:
        return f"revoked {_when(device.revoked_at)}"
    return "can answer"


def is_local_address(host: str, *, loopback: bool) -> bool | None:
    """Whether `host` is an address of this machine (None: a name, not checked here)."""
    try:
        wanted = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    return any(ipaddress.ip_address(entry.address) == wanted
               for entry in local_addresses(loopback=loopback))
