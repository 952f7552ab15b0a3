"""The desk's side of the phone sockets: who is connected, what each is told, and what
each answer does.

`Phones` follows the broker (a new request is `added` to every authenticated phone, a
newer state `updated`, an end `gone` at once, with why and by whom) and the device
registry (a revoked device's sockets get `revoked` and close 4403). `Phones.serve` runs
one WebSocket (a `phone_socket.PhoneSocket`) through the contract's flow: hello → auth
(or a pairing that waits for the desk) → snapshot → answers. An answer is verified (the
device's key, this socket's nonce for that request, the clock) before it is read, and
goes to the request's `PendingApproval` as the Decision the desk's dialogs make; the
first answer anywhere wins. Refused answers are kept (`refused`) for the desk to show
and logged without payloads or signatures.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.approval.pending import PendingApproval, PendingEvent
from qoder_desktop.away.devices import Device, DeviceRegistry
from qoder_desktop.away.pairing import ConfirmedPairing, Pairings
from qoder_desktop.away.phone_socket import (
    CLOSE_GOING_AWAY,
    CLOSE_REVOKED,
    CLOSE_TRY_LATER,
    CLOSE_UNAUTHORISED,
    PhoneSocket,
)
from qoder_desktop.away.phone_view import AnswerRefused, decision_for, request_view
from qoder_desktop.away.signed import (
    SignedRefused,
    b64url_encode,
    signed_device,
    signed_parts,
    verified_answer,
    verified_auth,
)
from qoder_desktop.domain.models import ApprovalRequest, Decision

__all__ = ["AUTH_DEADLINE_S", "MAX_PHONES", "Phones", "RefusedAnswer"]

log = logging.getLogger(__name__)

PROTOCOL = 1
AUTH_DEADLINE_S = 10.0
"""A socket that has not authenticated within this many seconds is closed."""
MAX_PHONES = 8
"""Phone sockets open at once, at most (a person has a phone or two; each tab counts)."""
CLOSE_WAIT_S = 2.0
"""How long turning Away mode off waits for the phones' sockets to close."""
KEPT_REFUSALS = 50
KEPT_ENDED = 1000
_BY = {"user": "the desk", "cli": "the agent's CLI", "session_rule": "a session rule",
       "withdrawn": "the agent", "error": "Qoder Desktop"}
_GONE = {PendingEvent.ANSWERED: "answered", PendingEvent.WITHDRAWN: "withdrawn",
         PendingEvent.TIMED_OUT: "timed_out"}


@dataclass(frozen=True)
class RefusedAnswer:
    """An answer or sign-in the desk refused, for the person to see.

    Attributes:
        at: when.
        device: the device's label, or what it claimed to be ("an unknown device").
        request_id: the request it answered (None for a sign-in).
        reason: the contract's word ("revoked", "bad signature", …).
    """

    at: datetime
    device: str
    request_id: str | None
    reason: str


def _by(decision: Decision | None) -> str:
    if decision is None:
        return _BY["error"]
    return decision.device or _BY.get(decision.decided_by.value, decision.decided_by.value)


class Phones:
    """Every phone socket of one Away session and what they are told.

    Args:
        broker: the one queue of requests (answers go to its `PendingApproval`s).
        devices: the paired devices (keys, revocation, last use).
        pairings: the pairing offer and the claim waiting for the desk.
        desk_name: the name the phone shows for this desk.
        on_change: called when the count of authenticated phones or the refusals change.
    """

    def __init__(self, broker: ApprovalBroker, devices: DeviceRegistry, pairings: Pairings,
                 *, desk_name: str, on_change: Callable[[], None] = lambda: None,
                 max_phones: int = MAX_PHONES, auth_deadline_s: float = AUTH_DEADLINE_S
                 ) -> None:
        self._broker = broker
        self._devices = devices
        self._pairings = pairings
        self._desk_name = desk_name
        self._on_change = on_change
        self._max_phones = max_phones
        self._auth_deadline = auth_deadline_s
        self._sockets: set[PhoneSocket] = set()
        self._observed: dict[str, Callable[[], None]] = {}
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._views: dict[str, tuple[ApprovalRequest, dict[str, Any]]] = {}
        """Each waiting request's view, built once per state of it for every phone."""
        self.refused: deque[RefusedAnswer] = deque(maxlen=KEPT_REFUSALS)
        """The latest refused answers and sign-ins, oldest first."""
        self._unsubscribe: list[Callable[[], None]] = []
        self._none_open = asyncio.Event()
        self._none_open.set()

    # -- following the broker and the devices ----------------------------------------

    def attach(self) -> None:
        """Follow the broker's requests and the device list (at start)."""
        self._unsubscribe = [self._broker.subscribe(self._on_broker),
                             self._devices.subscribe(self._on_devices)]
        for pending in self._broker.approvals():
            self._observe(pending)

    def detach(self) -> None:
        """Stop following, and close every socket (going away)."""
        for stop in self._unsubscribe + list(self._observed.values()):
            stop()
        self._unsubscribe, self._observed, self._views = [], {}, {}
        for phone in list(self._sockets):
            phone.close(CLOSE_GOING_AWAY)

    async def close_all(self, timeout: float = CLOSE_WAIT_S) -> None:
        """`detach`, then wait (at most `timeout` seconds) until every phone socket has
        sent its going-away close and ended, so the server stops with none mid-way."""
        self.detach()
        if self._sockets:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._none_open.wait(), timeout)

    @property
    def connected(self) -> int:
        """How many phones are signed in now."""
        return sum(phone.device is not None for phone in self._sockets)

    def _on_broker(self, event: BrokerEvent, request: ApprovalRequest,
                   _decision: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            pending = self._broker.approval(request.request_id)
            if pending is not None:
                self._observe(pending)
                shown = self._shown(pending.request)
                for phone in self._signed_in():
                    phone.show(pending.request_id, shown, "added")

    def _observe(self, pending: PendingApproval) -> None:
        if pending.request_id not in self._observed:
            self._observed[pending.request_id] = pending.observe(self._on_pending)

    def _on_pending(self, pending: PendingApproval, event: PendingEvent) -> None:
        if event is PendingEvent.UPDATED:
            shown = self._shown(pending.request)
            for phone in self._signed_in():
                phone.show(pending.request_id, shown, "updated")
            return
        why = _GONE.get(event)
        if why is None:
            return
        request_id = pending.request_id
        stop = self._observed.pop(request_id, None)
        if stop is not None:
            stop()
        self._views.pop(request_id, None)
        self._ended[request_id] = None
        while len(self._ended) > KEPT_ENDED:
            self._ended.popitem(last=False)
        message = {"type": "gone", "id": request_id, "why": why, "by": _by(pending.decision)}
        for phone in self._sockets:
            phone.nonces.drop(request_id)
            if phone.device is not None:
                phone.send(message)

    def _on_devices(self) -> None:
        for phone in list(self._sockets):
            if phone.device is None:
                continue
            device = self._devices.get(phone.device.device_id)
            if device is None or not device.trusted:
                log.info("away mode: %s was revoked; closing its connection",
                         phone.device.label)
                phone.close(CLOSE_REVOKED, {"type": "revoked"})
                phone.device = None
                self._on_change()

    def _shown(self, request: ApprovalRequest) -> dict[str, Any]:
        """The phone's view of `request` as it is now (built once for every phone)."""
        cached = self._views.get(request.request_id)
        if cached is None or cached[0] is not request:
            cached = self._views[request.request_id] = (request, request_view(request, ""))
        return cached[1]

    def _signed_in(self) -> list[PhoneSocket]:
        return [phone for phone in self._sockets if phone.device is not None]

    def _refuse(self, device: str, request_id: str | None, reason: str) -> None:
        self.refused.append(RefusedAnswer(datetime.now(UTC), device, request_id, reason))
        log.warning("away mode: refused %s from %s: %s",
                    f"an answer to {request_id}" if request_id else "a sign-in", device, reason)
        self._on_change()

    # -- one socket ------------------------------------------------------------------

    async def serve(self, websocket: WebSocket) -> None:
        """Run one phone's WebSocket to its end (the Starlette endpoint)."""
        await websocket.accept()
        if len(self._sockets) >= self._max_phones:
            await websocket.close(CLOSE_TRY_LATER)
            return
        phone = PhoneSocket(websocket)
        self._sockets.add(phone)
        self._none_open.clear()
        writer = asyncio.create_task(phone.write_outbox(), name="qoder-desktop-away-phone")
        try:
            if await self._sign_in(phone):
                await self._read_answers(phone)
        except WebSocketDisconnect:
            pass
        finally:
            self._sockets.discard(phone)
            if phone.device is not None:
                phone.device = None
                self._on_change()
            if not writer.done():
                phone.close(CLOSE_GOING_AWAY)
                try:
                    await asyncio.wait_for(asyncio.shield(writer), 1.0)
                except (TimeoutError, Exception):
                    writer.cancel()
            if not self._sockets:
                self._none_open.set()

    async def _sign_in(self, phone: PhoneSocket) -> bool:
        """hello → auth; a waiting pairing first waits for the desk. True once signed in."""
        challenge = b64url_encode(secrets.token_bytes(32))
        phone.send({"type": "hello", "challenge": challenge, "desk": self._desk_name,
                    "protocol": PROTOCOL})
        try:
            message = await asyncio.wait_for(phone.receive(), self._auth_deadline)
        except TimeoutError:
            phone.close(CLOSE_UNAUTHORISED, {"type": "refused", "reason": "too slow"})
            return False
        try:
            if message.get("type") != "auth":
                raise SignedRefused("invalid", "expected auth")
            payload, signature = signed_parts(message)
            claimed = signed_device(payload)
        except SignedRefused as exc:
            return self._refuse_sign_in(phone, "an unknown device", exc.reason)
        pairing = self._pairings.waiting(claimed)
        if pairing is not None:
            return await self._pair(phone, pairing.public_key, pairing.code, claimed,
                                    payload, signature, challenge)
        confirmed = self._pairings.confirmed(claimed)
        if confirmed is not None:
            return await self._paired_earlier(phone, confirmed, payload, signature, challenge)
        device = self._devices.get(claimed)
        if device is None:
            tampered = any(known.device_id == claimed and known.tampered
                           for known in self._devices.devices())
            who = ("a device whose stored record was tampered with" if tampered
                   else "an unknown device")
            return self._refuse_sign_in(phone, who, "unknown device")
        try:
            verified_auth(device.public_key, payload, signature, challenge=challenge)
        except SignedRefused as exc:
            return self._refuse_sign_in(phone, device.label, exc.reason)
        if not device.trusted:
            return self._refuse_sign_in(phone, device.label, "revoked", CLOSE_REVOKED)
        await self._signed_in_as(phone, device)
        return True

    def _refuse_sign_in(self, phone: PhoneSocket, who: str, reason: str,
                        code: int = CLOSE_UNAUTHORISED) -> bool:
        self._refuse(who, None, reason)
        phone.close(code, {"type": "refused", "reason": reason})
        return False

    async def _pair(self, phone: PhoneSocket, public_key: bytes, code: str, pairing_id: str,
                    payload: str, signature: str, challenge: str) -> bool:
        try:
            verified_auth(public_key, payload, signature, challenge=challenge)
        except SignedRefused as exc:
            return self._refuse_sign_in(phone, "a pairing phone", exc.reason)
        outcome = self._pairings.outcome(pairing_id)
        phone.send({"type": "pairing", "state": "waiting", "code": code})
        hung_up: asyncio.Future[None] = asyncio.ensure_future(phone.drain_until_close())
        try:
            waiters: list[asyncio.Future[Any]] = [outcome, hung_up]
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            hung_up.cancel()
        if not outcome.done():
            outcome.cancel()
            return False
        device = outcome.result()
        if device is None or (device := self._devices.get(device.device_id)) is None:
            phone.close(CLOSE_REVOKED, {"type": "pairing", "state": "refused"})
            return False
        await self._tell_paired(phone, device)
        return True

    async def _paired_earlier(self, phone: PhoneSocket, confirmed: ConfirmedPairing,
                              payload: str, signature: str, challenge: str) -> bool:
        """A phone signing in with the id of a pairing the desk already confirmed (its
        socket was not there at the click): told its device while the window is open."""
        try:
            verified_auth(confirmed.public_key, payload, signature, challenge=challenge)
        except SignedRefused as exc:
            return self._refuse_sign_in(phone, "a pairing phone", exc.reason)
        if not confirmed.open:
            return self._refuse_sign_in(phone, "a phone back too late from its pairing",
                                        "pairing ended")
        device = self._devices.get(confirmed.device_id)
        if device is None:
            return self._refuse_sign_in(phone, "a pairing phone", "unknown device")
        if not device.trusted:
            return self._refuse_sign_in(phone, device.label, "revoked", CLOSE_REVOKED)
        await self._tell_paired(phone, device)
        return True

    async def _tell_paired(self, phone: PhoneSocket, device: Device) -> None:
        phone.send({"type": "paired", "device_id": device.device_id, "name": device.name})
        await self._signed_in_as(phone, device)

    async def _signed_in_as(self, phone: PhoneSocket, device: Device) -> None:
        phone.device = device
        await self._devices.touch(device.device_id)
        requests = [pending.request for pending in reversed(self._broker.approvals())]
        phone.send({"type": "snapshot", "requests": [
            phone.view(request.request_id, self._shown(request)) for request in requests]})
        log.info("away mode: %s connected", device.label)
        self._on_change()

    async def _read_answers(self, phone: PhoneSocket) -> None:
        while phone.device is not None:
            message = await phone.receive()
            if phone.device is None:
                return
            if message.get("type") == "answer":
                await self._answer(phone, message)

    async def _answer(self, phone: PhoneSocket, message: dict[str, Any]) -> None:
        device = phone.device
        assert device is not None
        request_id: str | None = None
        try:
            payload, signature = signed_parts(message)
            answer = verified_answer(device.public_key, payload, signature)
            request_id = answer.request_id
            if answer.device_id != device.device_id:
                raise SignedRefused("bad signature", "signed for another device")
            current = self._devices.get(device.device_id)
            if current is None or not current.trusted:
                raise SignedRefused("revoked")
            pending = self._broker.approval(answer.request_id)
            if pending is None:
                raise SignedRefused("already answered" if answer.request_id in self._ended
                                    else "unknown request")
            if not phone.nonces.take(answer.request_id, answer.nonce):
                raise SignedRefused("stale nonce")
            try:
                decision = decision_for(pending.request, answer.decision, answer.content,
                                        current.label)
            except AnswerRefused as exc:
                raise SignedRefused(exc.reason, str(exc)) from None
            if not pending.answer(decision):
                raise SignedRefused("already answered")
        except SignedRefused as exc:
            self._refuse(device.label, request_id, exc.reason)
            phone.send({"type": "result", "id": request_id, "ok": False,
                        "reason": exc.reason})
            if exc.reason == "revoked":
                phone.close(CLOSE_REVOKED, {"type": "revoked"})
                phone.device = None
                return
            self._offer_again(phone, request_id)
            return
        log.info("away mode: %s answered %s (%s)", device.label, request_id, answer.decision)
        phone.send({"type": "result", "id": request_id, "ok": True, "reason": ""})
        await self._devices.touch(device.device_id)

    def _offer_again(self, phone: PhoneSocket, request_id: str | None) -> None:
        """A refused answer spent its nonce: a request still waiting gets a fresh one."""
        pending = self._broker.approval(request_id) if request_id else None
        if pending is not None:
            phone.show(pending.request_id, self._shown(pending.request), "updated")
