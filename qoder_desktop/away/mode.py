"""Away mode's state: on or off, where it listens, its time limit, who is connected.

`AwayMode.start` loads the desk's CA, issues the server's certificate for the address the
person chose, and serves the phone page there (`server.AwayServer`); `stop` ends it all
(idempotent): the pairing offer, every phone socket, both listeners and the time limit.
Subscribers hear each change of `status` (on/off, connected phones, why it went off).
Qt-free; the Settings page, the tray item and `--away` use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.away.authority import AuthorityUnavailable, DeskAuthority, HostNotCovered
from qoder_desktop.away.devices import DeviceRegistry
from qoder_desktop.away.pairing import Pairings
from qoder_desktop.away.phones import AUTH_DEADLINE_S, MAX_PHONES, Phones, RefusedAnswer
from qoder_desktop.away.server import AwayError, AwayServer, PageFiles

__all__ = ["DEFAULT_PORT", "DEFAULT_TIME_LIMIT_S", "AwayError", "AwayMode", "AwayStatus"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
DEFAULT_TIME_LIMIT_S = 4 * 3600.0
TIME_LIMIT_REACHED = "Away mode turned off by itself at its time limit."

AuthorityLoader = Callable[[], Awaitable[DeskAuthority]]


@dataclass(frozen=True)
class AwayStatus:
    """What Away mode is doing now.

    Attributes:
        on: serving.
        url: the page's origin (`https://HOST:PORT`) while on.
        ca_url: where a phone gets the CA certificate (plain HTTP, PORT+1) while on.
        fingerprint: the CA's SHA-256 fingerprint, as phones show it.
        phones: phones connected and signed in now.
        ends_at: when the time limit turns it off (None: no limit, or off).
        why_off: why it is off (None while on, or before it was ever on).
        refused: how many answers or sign-ins were refused this session.
    """

    on: bool = False
    url: str | None = None
    ca_url: str | None = None
    fingerprint: str | None = None
    phones: int = 0
    ends_at: datetime | None = None
    why_off: str | None = None
    refused: int = 0


async def _bind_address(host: str) -> str:
    """The address to listen on for `host`: itself for an IP literal, else what the name
    resolves to (on a worker thread)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).compressed
    except ValueError:
        pass
    try:
        infos = await asyncio.to_thread(socket.getaddrinfo, host, None,
                                        type=socket.SOCK_STREAM)
    except OSError:
        raise AwayError(f"{host} does not resolve to an address of this computer, so Away "
                        "mode cannot listen on it.") from None
    return str(infos[0][4][0])


class AwayMode:
    """Away mode: on, off, and what it is doing (see the module docstring).

    Args:
        broker: the one queue of requests the phones see and answer.
        devices: the paired devices, loaded.
        authority_loader: loads the desk's CA (`DeskAuthority.load_or_create(...)`).
        desk_name: the name phones show for this desk.
        files: the phone page's files (the package's own by default).
        max_phones: phone sockets open at once, at most.
        auth_deadline_s: seconds a socket has to sign in.
        clock: the wall clock pairing offers are timed by.
    """

    def __init__(self, broker: ApprovalBroker, devices: DeviceRegistry,
                 authority_loader: AuthorityLoader, *, desk_name: str,
                 files: PageFiles | None = None, max_phones: int = MAX_PHONES,
                 auth_deadline_s: float = AUTH_DEADLINE_S,
                 clock: Callable[[], float] = time.time) -> None:
        self._broker = broker
        self._devices = devices
        self._load_authority = authority_loader
        self._desk_name = desk_name
        self._files = files
        self._max_phones = max_phones
        self._auth_deadline = auth_deadline_s
        self.pairings = Pairings(devices, clock=clock)
        self._status = AwayStatus()
        self._server: AwayServer | None = None
        self._phones: Phones | None = None
        self._limit: asyncio.TimerHandle | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._subscribers: list[Callable[[AwayStatus], None]] = []

    @property
    def status(self) -> AwayStatus:
        """What Away mode is doing now."""
        return self._status

    @property
    def port(self) -> int | None:
        """The HTTPS port while on."""
        return self._server.port if self._server is not None else None

    def refused(self) -> list[RefusedAnswer]:
        """The latest refused answers and sign-ins of this session, oldest first."""
        return list(self._phones.refused) if self._phones is not None else []

    def subscribe(self, callback: Callable[[AwayStatus], None]) -> Callable[[], None]:
        """Tell `callback` of every status change; returns the unsubscribe."""
        self._subscribers.append(callback)

        def stop() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return stop

    def _set(self, status: AwayStatus) -> None:
        self._status = status
        for callback in list(self._subscribers):
            try:
                callback(status)
            except Exception:
                log.exception("an Away mode status subscriber failed")

    def _phones_changed(self) -> None:
        phones = self._phones
        if phones is not None and self._status.on:
            self._set(replace(self._status, phones=phones.connected,
                              refused=len(phones.refused)))

    # -- on and off ------------------------------------------------------------------

    async def start(self, host: str, port: int = DEFAULT_PORT, *,
                    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S) -> AwayStatus:
        """Serve the phone page on `host:port` (and the certificate help on port+1).

        Raises:
            AwayError: already on, no keyring for the CA, an address the CA cannot name
                or that is not this computer's, or a port in use (a sentence each).
        """
        if self._status.on or self._server is not None:
            raise AwayError(f"Away mode is already on at {self._status.url}.")
        if self._stopping is not None:
            await asyncio.shield(self._stopping)
        try:
            authority = await self._load_authority()
            identity = authority.issue(host)
        except (AuthorityUnavailable, HostNotCovered) as exc:
            raise AwayError(str(exc)) from None
        address = await _bind_address(host)
        phones = Phones(self._broker, self._devices, self.pairings,
                        desk_name=self._desk_name, on_change=self._phones_changed,
                        max_phones=self._max_phones, auth_deadline_s=self._auth_deadline)
        server = AwayServer(phones, self.pairings, identity.ssl_context(), host=host,
                            bind_address=address, port=port, ca_pem=authority.ca_pem,
                            fingerprint=authority.ca_fingerprint, desk_name=self._desk_name,
                            files=self._files)
        phones.attach()
        try:
            await server.start()
        except BaseException:
            phones.detach()
            raise
        self._server, self._phones = server, phones
        ends_at = None
        if time_limit_s is not None:
            self._limit = asyncio.get_running_loop().call_later(time_limit_s,
                                                                self._time_is_up)
            ends_at = datetime.now(UTC) + timedelta(seconds=time_limit_s)
        log.info("Away mode on at %s", server.url)
        self._set(AwayStatus(on=True, url=server.url, ca_url=server.ca_url,
                             fingerprint=authority.ca_fingerprint, ends_at=ends_at))
        return self._status

    def _time_is_up(self) -> None:
        self._limit = None
        self._begin_stop(TIME_LIMIT_REACHED)

    def _begin_stop(self, why: str) -> asyncio.Task[None] | None:
        if self._stopping is None and self._server is not None:
            self._stopping = asyncio.ensure_future(self._stop(why))
        return self._stopping

    async def stop(self, why: str) -> None:
        """Turn Away mode off (`why` is shown to the person); nothing happens when it is
        off already, and a second call waits for the first."""
        stopping = self._begin_stop(why)
        if stopping is not None:
            await asyncio.shield(stopping)

    async def _stop(self, why: str) -> None:
        server, phones = self._server, self._phones
        try:
            if self._limit is not None:
                self._limit.cancel()
                self._limit = None
            self.pairings.withdraw()
            if phones is not None:
                await phones.close_all()
            if server is not None:
                with contextlib.suppress(Exception):
                    await server.stop()
        finally:
            self._server, self._phones, self._stopping = None, None, None
            log.info("Away mode off: %s", why)
            self._set(AwayStatus(on=False, fingerprint=self._status.fingerprint,
                                 why_off=why))
