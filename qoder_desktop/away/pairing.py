"""Pairing a phone: one offer at a time, a single-use token, the short code, the desk's
confirmation.

The desk shows a QR code with `https://HOST:PORT/#pair=<token>`. The phone makes its own
key pair and claims the token with its public key (`Pairings.claim`): the token is used
up by that first claim, right or wrong, and both screens then show the same short code
(`short_code`, derived from the token and the phone's key). Only the person's click at
the desk (`Pairings.confirm`) adds the device, through the device registry. A QR code
photographed by someone else gives a claim with another key and so another code, which
the person refuses; a replayed token finds nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from qoder_desktop.away.devices import Device, DeviceRegistry
from qoder_desktop.away.signed import SignedRefused, load_phone_key
from qoder_desktop.text.visible import has_hidden

__all__ = ["CODE_CONTEXT", "MAX_NAME_CHARS", "PAIRING_TTL_S",
           "PairingOffer", "PairingRefused", "Pairings", "PendingPairing", "short_code"]

log = logging.getLogger(__name__)

PAIRING_TTL_S = 5 * 60
"""How long an offer's token can be claimed, and a claim waits for the desk's click."""
CODE_CONTEXT = b"qoder-desktop pairing v1\0"
MAX_NAME_CHARS = 40


def short_code(token: str, spki_der: bytes) -> str:
    """The code both screens show, "0123 4567": the first 8 bytes of
    SHA-256(CODE_CONTEXT + token + NUL + SPKI DER), big-endian, modulo 10^8."""
    digest = hashlib.sha256(CODE_CONTEXT + token.encode("utf-8") + b"\0" + spki_der).digest()
    number = int.from_bytes(digest[:8], "big") % 10**8
    text = f"{number:08d}"
    return f"{text[:4]} {text[4:]}"


class PairingRefused(Exception):
    """A claim or confirmation the desk refuses; the text is for the phone or the person
    and never holds a token. `status`: the HTTP status the claim gets (403 for the
    token, 400 for a malformed key or name)."""

    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class PairingOffer:
    """The offer the desk shows as a QR code: its token, URL and when it ends."""

    token: str
    url: str
    expires_at: datetime

    def __repr__(self) -> str:  # the token is a secret until it is claimed
        return f"PairingOffer(url=<hidden>, expires_at={self.expires_at.isoformat()})"


@dataclass(frozen=True)
class PendingPairing:
    """A claimed offer waiting for the person's confirmation at the desk."""

    pairing_id: str
    name: str
    public_key: bytes
    code: str
    claimed_at: datetime


Listener = Callable[[PendingPairing | None], None]


class Pairings:
    """The one pairing offer and the one claim waiting for the desk.

    Subscribers hear the claim that waits (to show its code) and None when nothing waits
    any more (confirmed, refused, expired, withdrawn). The server awaits `outcome`.
    """

    def __init__(self, devices: DeviceRegistry, *, ttl_s: float = PAIRING_TTL_S,
                 clock: Callable[[], float] = time.time) -> None:
        self._devices = devices
        self._ttl = ttl_s
        self._clock = clock
        self._offer: tuple[str, float] | None = None
        self._pending: PendingPairing | None = None
        self._pending_until = 0.0
        self._outcome: asyncio.Future[Device | None] | None = None
        self._outcome_of = ""
        """The pairing id `_outcome` ends (kept while a confirmation adds the device)."""
        self._expiry: asyncio.TimerHandle | None = None
        self._listeners: list[Listener] = []

    # -- the offer -------------------------------------------------------------------

    def offer(self, base_url: str) -> PairingOffer:
        """A new offer for `base_url` ("https://HOST:PORT"); any earlier offer and any
        claim still waiting end (one at a time)."""
        self.withdraw()
        token = secrets.token_urlsafe(32)
        until = self._clock() + self._ttl
        self._offer = (token, until)
        return PairingOffer(token, f"{base_url.rstrip('/')}/#pair={token}",
                            datetime.fromtimestamp(until, UTC))

    def claim(self, token: str, public_key: bytes, name: str) -> PendingPairing:
        """A phone claims the offer with its public key and name.

        Raises:
            PairingRefused: 400 for a malformed key or name (the offer stays), 403 for an
                unknown, used or expired token (the first claim of a token uses it up).
        """
        try:
            load_phone_key(public_key)
        except SignedRefused:
            raise PairingRefused("The phone's key is not an ECDSA P-256 public key.",
                                 400) from None
        name = name.strip() if isinstance(name, str) else ""
        if not name or len(name) > MAX_NAME_CHARS or has_hidden(name):
            raise PairingRefused(f"The device name must be 1 to {MAX_NAME_CHARS} visible "
                                 "characters.", 400)
        offer, self._offer = self._offer, None
        if offer is None or not secrets.compare_digest(offer[0].encode(), token.encode()):
            self._offer = offer  # (a wrong token does not end the right one)
            raise PairingRefused("This pairing code is unknown or was already used. Show "
                                 "a new one at the desk.")
        if self._clock() > offer[1]:
            raise PairingRefused("This pairing code has expired. Show a new one at the desk.")
        self._end_pending(None)
        now = self._clock()
        pending = PendingPairing(secrets.token_urlsafe(16), name, public_key,
                                 short_code(offer[0], public_key),
                                 datetime.fromtimestamp(now, UTC))
        self._pending = pending
        self._pending_until = now + self._ttl
        loop = asyncio.get_running_loop()
        self._outcome = loop.create_future()
        self._outcome_of = pending.pairing_id
        self._expiry = loop.call_later(self._ttl, self._expire, pending.pairing_id)
        log.info("away mode: a phone named %r claimed the pairing offer", name)
        self._tell(pending)
        return pending

    def pending(self, pairing_id: str | None = None) -> PendingPairing | None:
        """The claim waiting for the desk (the one with `pairing_id`, if given)."""
        pending = self._pending
        if pending is None or (pairing_id is not None and not secrets.compare_digest(
                pending.pairing_id.encode(), pairing_id.encode())):
            return None
        return pending

    # -- the desk's answer -----------------------------------------------------------

    async def confirm(self, pairing_id: str) -> Device:
        """The person confirmed that both screens show the same code: the device is
        added (and trusted from now on).

        Raises:
            PairingRefused: nothing with that id waits (refused, expired or replaced).
        """
        pending = self.pending(pairing_id)
        if pending is None or self._clock() > self._pending_until:
            raise PairingRefused("That pairing is no longer waiting; pair the phone again.")
        self._pending = None  # (one confirmation, even if two clicks race)
        try:
            device = await self._devices.add(pending.name, pending.public_key)
        except BaseException:
            self._end_pending(None)
            raise
        log.info("away mode: paired %s", device.label)
        self._end_pending(device)
        return device

    def refuse(self, pairing_id: str) -> None:
        """The person refused the claim (the codes differ, or it is not their phone)."""
        if self.pending(pairing_id) is not None:
            log.info("away mode: a pairing was refused at the desk")
            self._end_pending(None)

    def withdraw(self) -> None:
        """End the offer and any claim waiting (Away mode turns off)."""
        self._offer = None
        if self._pending is not None or self._outcome is not None:
            self._end_pending(None)

    def outcome(self, pairing_id: str) -> asyncio.Future[Device | None]:
        """The end of the claim `pairing_id`, taken now: its device once confirmed, None
        when it was refused, expired or replaced (already None for no such claim)."""
        future = self._outcome
        if future is None or not secrets.compare_digest(self._outcome_of.encode(),
                                                        pairing_id.encode()):
            done: asyncio.Future[Device | None] = (
                asyncio.get_running_loop().create_future())
            done.set_result(None)
            return done
        return asyncio.shield(future)

    # -- subscribers -----------------------------------------------------------------

    def subscribe(self, callback: Listener) -> Callable[[], None]:
        """Tell `callback` of every claim that waits and of its end (None)."""
        self._listeners.append(callback)

        def stop() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return stop

    def _tell(self, pending: PendingPairing | None) -> None:
        for listener in list(self._listeners):
            try:
                listener(pending)
            except Exception:
                log.exception("a pairing listener failed")

    def _expire(self, pairing_id: str) -> None:
        if self.pending(pairing_id) is not None:
            log.info("away mode: a pairing claim expired unconfirmed")
            self._end_pending(None)

    def _end_pending(self, device: Device | None) -> None:
        had = self._pending is not None or self._outcome is not None
        self._pending = None
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        outcome, self._outcome = self._outcome, None
        if outcome is not None and not outcome.done():
            outcome.set_result(device)
        if had:
            self._tell(None)
