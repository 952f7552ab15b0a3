"""Away mode on 127.0.0.1 with real TLS, and a Python phone that talks to it.

`away_rig(db, tmp_path)` starts the real `AwayMode` (the desk's CA from the test's
keyring, the real device registry, the real broker and ledger) on a free port pair;
`PhoneClient` is the page's side of the WebSocket over `websockets`, trusting only the
desk's CA, and `pair` takes a phone through pairing as a person would.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from helpers.away_devices import away_secrets, device_registry
from helpers.broker_events import SESSION, bash_request
from helpers.phone import Phone
from websockets.asyncio.client import ClientConnection, connect

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.away.authority import DeskAuthority
from qoder_desktop.away.devices import Device, DeviceRegistry
from qoder_desktop.away.mode import AwayMode
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, SessionInfo
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

HOST = "127.0.0.1"
WAIT = 10.0


@dataclass
class AwayRig:
    """A running Away mode and what stands behind it."""

    mode: AwayMode
    broker: ApprovalBroker
    ledger: Ledger
    devices: DeviceRegistry
    authority: DeskAuthority
    client_ssl: ssl.SSLContext

    @property
    def port(self) -> int:
        assert self.mode.port is not None
        return self.mode.port

    @property
    def origin(self) -> str:
        return f"https://{HOST}:{self.port}"

    def http(self) -> httpx.AsyncClient:
        """An HTTPS client that trusts only the desk's CA."""
        return httpx.AsyncClient(base_url=self.origin, verify=self.client_ssl, timeout=WAIT)

    def ask(self, command: str = "rm -rf build", **fields: Any) -> asyncio.Task[Decision]:
        """An agent's request, waiting in the broker."""
        return asyncio.ensure_future(self.broker.request(bash_request(command, **fields)))

    def ask_request(self, request: ApprovalRequest) -> asyncio.Task[Decision]:
        """`request`, waiting in the broker."""
        return asyncio.ensure_future(self.broker.request(request))


@asynccontextmanager
async def away_rig(db: Database, tmp_path: Path, **options: Any) -> AsyncIterator[AwayRig]:
    """Away mode started on 127.0.0.1 (free ports), stopped afterwards (`options` go to
    `AwayMode`)."""
    db.upsert_session(SessionInfo(session_id=SESSION, name="demo", backend=Backend.CLAUDE,
                                  cwd="/tmp/ws"))
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    devices = await device_registry(db)
    authority = await DeskAuthority.load_or_create(away_secrets(), tmp_path)

    async def load() -> DeskAuthority:
        return authority

    mode = AwayMode(broker, devices, load, desk_name="test desk", **options)
    await mode.start(HOST, 0, time_limit_s=None)
    client_ssl = ssl.create_default_context(cadata=authority.ca_pem.decode())
    try:
        yield AwayRig(mode, broker, ledger, devices, authority, client_ssl)
    finally:
        await mode.stop("the test ended")


class PhoneClient:
    """The page's side of one WebSocket."""

    def __init__(self, connection: ClientConnection, phone: Phone) -> None:
        self.connection = connection
        self.phone = phone
        self.challenge = ""

    async def receive(self) -> dict[str, Any]:
        """The next message from the desk."""
        message = json.loads(await asyncio.wait_for(self.connection.recv(), WAIT))
        assert isinstance(message, dict)
        return message

    async def receive_type(self, kind: str) -> dict[str, Any]:
        """The next message of type `kind` (others before it are skipped)."""
        while True:
            message = await self.receive()
            if message["type"] == kind:
                return message

    async def send(self, message: dict[str, Any]) -> None:
        """Send `message`."""
        await self.connection.send(json.dumps(message))

    async def hello(self) -> dict[str, Any]:
        """The desk's hello (its challenge is kept)."""
        hello = await self.receive()
        assert hello["type"] == "hello" and hello["protocol"] == 1
        self.challenge = hello["challenge"]
        return hello

    async def sign_in(self) -> list[dict[str, Any]]:
        """hello → auth → the snapshot's requests."""
        await self.hello()
        await self.send(self.phone.auth(self.challenge))
        snapshot = await self.receive()
        assert snapshot["type"] == "snapshot", snapshot
        return list(snapshot["requests"])

    async def answer(self, request: dict[str, Any], decision: str,
                     content: dict[str, Any] | None = None) -> dict[str, Any]:
        """Answer `request` (as the phone saw it) and wait for the desk's result."""
        await self.send(self.phone.answer(request["id"], request["nonce"], decision, content))
        return await self.receive_type("result")

    async def closed_with(self) -> int | None:
        """Wait for the desk to close the socket; its close code."""
        await asyncio.wait_for(self.connection.wait_closed(), WAIT)
        return self.connection.close_code


@asynccontextmanager
async def phone_socket(rig: AwayRig, phone: Phone, *, origin: str | None = None,
                       host_header: str | None = None) -> AsyncIterator[PhoneClient]:
    """A WebSocket to the desk from `origin` (the page's own by default)."""
    uri = f"wss://{host_header or f'{HOST}:{rig.port}'}/ws"
    async with connect(uri, ssl=rig.client_ssl, origin=origin or rig.origin,  # type: ignore[arg-type]
                       host=HOST, port=rig.port, server_hostname=HOST,
                       open_timeout=WAIT) as connection:
        yield PhoneClient(connection, phone)


async def pair(rig: AwayRig, phone: Phone) -> Device:
    """Pair `phone` as a person would: offer, claim, compare codes, confirm at the desk."""
    offer = rig.mode.pairings.offer(rig.origin)
    async with rig.http() as http:
        response = await http.post("/api/pair", json={
            "token": offer.token, "public_key": phone.public_key, "name": phone.name},
            headers={"Origin": rig.origin})
    assert response.status_code == 200, response.text
    claim = response.json()
    assert claim["code"] == phone.code(offer.token)
    async with phone_socket(rig, phone) as client:
        await client.hello()
        await client.send(phone.auth(client.challenge, device_id=claim["pairing_id"]))
        waiting = await client.receive()
        assert waiting == {"type": "pairing", "state": "waiting", "code": claim["code"]}
        pending = rig.mode.pairings.pending(claim["pairing_id"])
        assert pending is not None and pending.code == claim["code"]
        device = await rig.mode.pairings.confirm(claim["pairing_id"])
        paired = await client.receive()
        assert paired == {"type": "paired", "device_id": device.device_id,
                          "name": phone.name}
        assert (await client.receive())["type"] == "snapshot"
    phone.device_id = device.device_id
    return device  # type: ignore[return-value]
