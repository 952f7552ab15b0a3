"""Away mode's core for the desk's view tests: the real `Pairings` over the real
`DeviceRegistry` (SQLite, the in-memory keyring), with `DeskSideMode` keeping Away
mode's on/off state as `away.mode.AwayMode` does, without its HTTPS server — the desk's
views and controller see exactly the contract's interface (docs/AWAY-PROTOCOL.md).
The server's own tests cover what the phone sees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from qoder_desktop.away.devices import DeviceRegistry
from qoder_desktop.away.pairing import PairingOffer, Pairings
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.store.database import Database
from qoder_desktop.ui.control.away import AwayCore

FINGERPRINT = ":".join(["AB", "CD", "EF", "01"] * 8)


class StartRefused(RuntimeError):
    """What `DeskSideMode.start` raises when told to fail (as `AwayError` would)."""


@dataclass(frozen=True)
class DeskStatus:
    """The contract's `AwayStatus`."""

    on: bool = False
    url: str | None = None
    ca_url: str | None = None
    fingerprint: str | None = None
    phones: tuple[str, ...] = ()
    ends_at: datetime | None = None
    why_off: str | None = None


@dataclass
class DeskSideMode:
    """Away mode's state without its server (see the module docstring)."""

    pairings: Pairings
    status: DeskStatus = field(default_factory=DeskStatus)
    refuse_start: str | None = None
    """A sentence `start` raises `StartRefused` with (None: it starts)."""
    started: list[tuple[str, int, float | None]] = field(default_factory=list)
    offers: list[PairingOffer] = field(default_factory=list)
    _listeners: list[Callable[[Any], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        offer = self.pairings.offer

        def recorded(base_url: str) -> PairingOffer:
            made = offer(base_url)
            self.offers.append(made)
            return made

        self.pairings.offer = recorded  # type: ignore[method-assign]

    async def start(self, host: str, port: int = 8765, *,
                    time_limit_s: float | None = 4 * 3600) -> DeskStatus:
        """On at `host:port` (or refused)."""
        if self.refuse_start is not None:
            raise StartRefused(self.refuse_start)
        self.started.append((host, port, time_limit_s))
        shown = f"[{host}]" if ":" in host else host
        ends = None if time_limit_s is None else datetime.now(UTC) + timedelta(
            seconds=time_limit_s)
        self._set(DeskStatus(True, f"https://{shown}:{port}", f"http://{shown}:{port + 1}/",
                             FINGERPRINT, (), ends))
        return self.status

    async def stop(self, why: str) -> None:
        """Off (idempotent)."""
        if self.status.on:
            self.pairings.withdraw()
            self._set(DeskStatus(fingerprint=FINGERPRINT, why_off=why))

    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Tell `callback` every new status."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    def _set(self, status: DeskStatus) -> None:
        self.status = status
        for listener in list(self._listeners):
            listener(status)


def desk_core(db: Database, secrets: SecretStore) -> tuple[AwayCore, DeskSideMode,
                                                             DeviceRegistry]:
    """A core factory's result over `db` and `secrets`, with its mode and registry."""
    devices = DeviceRegistry(db, secrets)
    mode = DeskSideMode(Pairings(devices))
    return AwayCore(mode, devices, StartRefused), mode, devices
