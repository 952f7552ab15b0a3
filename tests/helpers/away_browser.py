"""The desk side of the phone page's browser tests, and pairing a phone as a person does.

`AwayDesk` is the real desk in-process on the app's qasync loop: a broker over SQLite, the
device registry, and Away mode's HTTPS + WebSocket server (`AwayMode`) with a certificate
from the desk's own CA, on the fake LAN name `desk.test` mapped to loopback (here and in
the browser). The fixtures are in `tests/away/browser/conftest.py`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from helpers.broker_events import Recorder
from helpers.phone_browser import BrowserThread, PhonePage

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.away.authority import DeskAuthority
from qoder_desktop.away.devices import DeviceRegistry
from qoder_desktop.away.mode import AwayMode
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionInfo,
)
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

DESK_HOST = "desk.test"
"""The desk's LAN name as the phone knows it (mapped to 127.0.0.1 in the browser only)."""
SESSION = "session-away"


def resolve_test_names_to_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names under `.test` resolve to 127.0.0.1 on the desk too, as the browser's
    `--host-resolver-rules` map them (a LAN's DNS would, for a real desk name)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".test"):
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def spki_pin_of(pem: bytes) -> str:
    """Chromium's pin of a certificate: base64 SHA-256 of its SubjectPublicKeyInfo."""
    spki = x509.load_pem_x509_certificate(pem).public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")


def bash(command: str, **fields: Any) -> ApprovalRequest:
    """A Bash request of the test session."""
    return ApprovalRequest(session_id=SESSION, session_name="away demo", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command},
                           cwd="/tmp/away-ws", **fields)


def session_suggestion(rule: str) -> PermissionSuggestion:
    """What the agent's CLI suggests for "allow for this session" (`rule`, e.g.
    "Bash(npm run test:*)")."""
    return PermissionSuggestion(type="addRules", behavior=RuleBehavior.ALLOW,
                                rules=(RuleValue.parse(rule),), destination="localSettings")


@dataclass
class AwayDesk:
    """The desk side of a browser test: broker, devices, Away mode, and what happened."""

    db: Database
    broker: ApprovalBroker
    devices: DeviceRegistry
    mode: AwayMode
    port: int
    ca_pin: str
    recorder: Recorder
    asked: dict[str, asyncio.Task[Decision]] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        """The page's one origin, `https://desk.test:PORT`."""
        return f"https://{DESK_HOST}:{self.port}"

    async def ask(self, request: ApprovalRequest) -> ApprovalRequest:
        """Put `request` into the broker as an agent would; it waits for a person."""
        self.asked[request.request_id] = asyncio.ensure_future(self.broker.request(request))
        added = await self.recorder.next_added()
        assert added.request_id == request.request_id
        return added

    async def decision(self, request_id: str, timeout: float = 15) -> Decision:
        """The decision the agent got for `request_id` (fails if none comes)."""
        return await asyncio.wait_for(asyncio.shield(self.asked[request_id]), timeout)

    def still_waiting(self, request_id: str) -> bool:
        """True when nobody answered `request_id` yet (the agent is still blocked)."""
        return not self.asked[request_id].done() and self.broker.is_pending(request_id)

    def allows(self) -> list[Decision]:
        """Every allow the broker handed out in this test."""
        return [task.result() for task in self.asked.values()
                if task.done() and not task.cancelled() and task.exception() is None
                and task.result().kind.value.startswith("allow")]



@contextlib.asynccontextmanager
async def serving_desk(db: Database, secrets: SecretStore, data_dir: Path,
                       monkeypatch: pytest.MonkeyPatch, *, desk_name: str, session_name: str,
                       cwd: str) -> AsyncIterator[AwayDesk]:
    """Away mode on, serving `https://desk.test:PORT` on loopback (a free port and the next
    one) for the session `SESSION`, nothing paired yet; on leaving, the requests it asked
    are cancelled, Away mode stops and the broker closes."""
    db.upsert_session(SessionInfo(session_id=SESSION, name=session_name,
                                  backend=Backend.CLAUDE, cwd=cwd))
    broker = ApprovalBroker(db, Ledger(db))
    recorder = Recorder(broker)
    devices = DeviceRegistry(db, secrets)
    await devices.load()

    async def load_authority() -> DeskAuthority:
        return await DeskAuthority.load_or_create(secrets, data_dir)

    resolve_test_names_to_loopback(monkeypatch)
    mode = AwayMode(broker, devices, load_authority, desk_name=desk_name)
    await mode.start(DESK_HOST, 0, time_limit_s=None)
    assert mode.port is not None
    desk = AwayDesk(db, broker, devices, mode, mode.port,
                    spki_pin_of((await load_authority()).ca_pem), recorder)
    try:
        yield desk
    finally:
        for task in desk.asked.values():
            task.cancel()
        await mode.stop("the desk is closed")
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*desk.asked.values(), return_exceptions=True)
        broker.close()


async def launch_phone_browser(chromium: BrowserThread, desk: AwayDesk, *,
                               pins: tuple[str, ...] = (),
                               names: tuple[str, ...] = ()) -> None:
    """Start Chromium trusting the desk's CA (and `pins`), with `desk.test` and `names`
    mapped to loopback."""
    await chromium.launch(pins=(desk.ca_pin, *pins),
                          host_rules=[f"MAP {name} 127.0.0.1" for name in (DESK_HOST, *names)])


async def pair_phone(desk: AwayDesk, phone: PhonePage) -> str:
    """Pair `phone` as a person does; the paired device's id."""
    offer = desk.mode.pairings.offer(desk.origin)
    claimed: asyncio.Queue[Any] = asyncio.Queue()
    unsubscribe = desk.mode.pairings.subscribe(
        lambda pending: pending is not None and claimed.put_nowait(pending))
    try:
        await phone.goto(offer.url)
        pending = await asyncio.wait_for(claimed.get(), 15)
    finally:
        unsubscribe()
    await phone.wait_text("Waiting for you to confirm at the desk")  # its socket waits
    shown = await phone.do(lambda page: page.locator("#pairing-code").inner_text())
    assert shown == pending.code  # the person compares the two screens
    device = await desk.mode.pairings.confirm(pending.pairing_id)
    await phone.wait_text("Nothing is waiting for an answer.")
    return str(device.device_id)
