"""Signed things from a phone: parse and verify, and the nonces the desk hands out.

A signed thing is `{"payload": <string>, "signature": <base64url>}` (docs/AWAY-PROTOCOL.md).
The payload is the exact string the phone signed, a JSON array in a fixed order; the
signature is WebCrypto's ECDSA P-256 / SHA-256 output, IEEE P1363 `r||s` (64 bytes),
which is turned into DER for `cryptography`. The bytes are verified first and only then
is what they say believed: `verified_auth` and `verified_answer` return typed results or
raise `SignedRefused` with one of the contract's reasons.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import load_der_public_key

__all__ = ["ANSWER_TAG", "AUTH_TAG", "CLOCK_WINDOW_MS", "DECISIONS", "AuthProof",
           "NonceBook", "SignedAnswer", "SignedRefused", "b64url_decode", "b64url_encode",
           "load_phone_key", "now_ms", "verified_answer", "verified_auth", "verify_signature"]

AUTH_TAG = "qoder-desktop auth v1"
ANSWER_TAG = "qoder-desktop answer v1"
CLOCK_WINDOW_MS = 10 * 60 * 1000
"""A signed time must be within ±10 minutes of the desk's clock."""
DECISIONS = frozenset({"allow", "allow_session", "deny", "deny_stop", "answer",
                       "approve_plan", "keep_planning"})
"""The decisions a phone may sign (the contract's table)."""
MAX_PAYLOAD_CHARS = 48 * 1024
"""The longest payload looked at (a question's answers are short; a deny reason too)."""
MAX_ID_CHARS = 128
P1363_SIZE = 64
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")

BAD_SIGNATURE = "bad signature"
CLOCK = "clock"
INVALID = "invalid"
STALE_NONCE = "stale nonce"


class SignedRefused(ValueError):
    """A signed thing the desk does not believe; `reason` is the contract's word for why
    ("bad signature", "clock", "invalid"). The text never holds the payload."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def now_ms() -> int:
    """The desk's clock in milliseconds since the epoch, as `Date.now()` gives it."""
    return time.time_ns() // 1_000_000


def b64url_encode(data: bytes) -> str:
    """RFC 4648 §5 base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode base64url without padding (strict: another alphabet or padding is refused).

    Raises:
        SignedRefused: "invalid".
    """
    if not isinstance(text, str) or not _B64URL.match(text) or len(text) % 4 == 1:
        raise SignedRefused(INVALID, "not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise SignedRefused(INVALID, "not base64url") from exc


def load_phone_key(spki_der: bytes) -> ec.EllipticCurvePublicKey:
    """A phone's public key from its SPKI DER; only ECDSA P-256 is accepted.

    Raises:
        SignedRefused: "invalid" for anything else.
    """
    try:
        key = load_der_public_key(spki_der)
    except (ValueError, TypeError) as exc:
        raise SignedRefused(INVALID, "not a public key") from exc
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve,
                                                                        ec.SECP256R1):
        raise SignedRefused(INVALID, "not an ECDSA P-256 key")
    return key


def verify_signature(spki_der: bytes, payload: str, signature: str) -> None:
    """Check that `signature` (base64url P1363 `r||s`) signs the UTF-8 of `payload`.

    Raises:
        SignedRefused: "bad signature" (or "invalid" for a malformed key).
    """
    key = load_phone_key(spki_der)
    try:
        raw = b64url_decode(signature)
    except SignedRefused:
        raise SignedRefused(BAD_SIGNATURE, "signature is not base64url") from None
    if len(raw) != P1363_SIZE:
        raise SignedRefused(BAD_SIGNATURE, "signature is not 64 bytes")
    r = int.from_bytes(raw[:32], "big")
    s = int.from_bytes(raw[32:], "big")
    try:
        key.verify(encode_dss_signature(r, s), payload.encode("utf-8"),
                   ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise SignedRefused(BAD_SIGNATURE) from None


def signed_parts(message: dict[str, Any]) -> tuple[str, str]:
    """The payload and signature of a `{"payload", "signature"}` message.

    Raises:
        SignedRefused: "invalid" when either is missing or not a string.
    """
    payload, signature = message.get("payload"), message.get("signature")
    if not isinstance(payload, str) or not isinstance(signature, str):
        raise SignedRefused(INVALID, "payload and signature must be strings")
    if len(payload) > MAX_PAYLOAD_CHARS:
        raise SignedRefused(INVALID, "payload too long")
    return payload, signature


def _array(payload: str, tag: str, size: int) -> list[Any]:
    try:
        value = json.loads(payload)
    except ValueError as exc:
        raise SignedRefused(INVALID, "payload is not JSON") from exc
    if not isinstance(value, list) or len(value) != size or value[0] != tag:
        raise SignedRefused(INVALID, f"payload is not a {tag!r} array")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_ID_CHARS:
        raise SignedRefused(INVALID, f"{what} must be a short string")
    return value


def _time(value: Any, now: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SignedRefused(INVALID, "time must be an integer (ms)")
    if abs(value - now) > CLOCK_WINDOW_MS:
        raise SignedRefused(CLOCK, "the phone's clock is more than 10 minutes off")
    return value


def signed_device(payload: str) -> str:
    """The device id an auth payload names (to find the key that must have signed it).
    Nothing else of the payload is believed before `verified_auth`.

    Raises:
        SignedRefused: "invalid".
    """
    return _text(_array(payload, AUTH_TAG, 4)[2], "device id")


@dataclass(frozen=True)
class AuthProof:
    """A verified `["qoder-desktop auth v1", challenge, device_id, time_ms]`."""

    challenge: str
    device_id: str
    time_ms: int


@dataclass(frozen=True)
class SignedAnswer:
    """A verified `["qoder-desktop answer v1", request_id, nonce, decision, content,
    device_id, time_ms]`."""

    request_id: str
    nonce: str
    decision: str
    content: dict[str, Any]
    device_id: str
    time_ms: int


def verified_auth(spki_der: bytes, payload: str, signature: str, *, challenge: str,
                  now: int | None = None) -> AuthProof:
    """Verify an auth message against the key that must have signed it and the challenge
    this connection was sent.

    Raises:
        SignedRefused: "bad signature", "clock" or "invalid".
    """
    verify_signature(spki_der, payload, signature)
    _tag, signed_challenge, device_id, time_ms = _array(payload, AUTH_TAG, 4)
    if not isinstance(signed_challenge, str) or not hmac.compare_digest(
            signed_challenge.encode(), challenge.encode()):
        raise SignedRefused(BAD_SIGNATURE, "signed another challenge")
    return AuthProof(challenge, _text(device_id, "device id"),
                     _time(time_ms, now_ms() if now is None else now))


def verified_answer(spki_der: bytes, payload: str, signature: str, *,
                    now: int | None = None) -> SignedAnswer:
    """Verify an answer against its device's key, then read it.

    Raises:
        SignedRefused: "bad signature", "clock" or "invalid".
    """
    verify_signature(spki_der, payload, signature)
    _tag, request_id, nonce, decision, content, device_id, time_ms = _array(
        payload, ANSWER_TAG, 7)
    if decision not in DECISIONS:
        raise SignedRefused(INVALID, "unknown decision")
    if not isinstance(content, dict):
        raise SignedRefused(INVALID, "content must be an object")
    return SignedAnswer(_text(request_id, "request id"), _text(nonce, "nonce"), decision,
                        content, _text(device_id, "device id"),
                        _time(time_ms, now_ms() if now is None else now))


class NonceBook:
    """The nonces one connection was given: one per waiting request, each good for one
    answer to that request only, dropped when the request ends."""

    def __init__(self) -> None:
        self._nonces: dict[str, str] = {}

    def issue(self, request_id: str) -> str:
        """The nonce of `request_id` on this connection (a new one once the last was used)."""
        nonce = self._nonces.get(request_id)
        if nonce is None:
            nonce = self._nonces[request_id] = b64url_encode(secrets.token_bytes(16))
        return nonce

    def take(self, request_id: str, nonce: str) -> bool:
        """Use `nonce` for `request_id`: True once, for the nonce this connection holds
        for that request; any attempt spends it (a replay or a guess finds nothing)."""
        held = self._nonces.pop(request_id, None)
        return held is not None and hmac.compare_digest(held.encode(), nonce.encode())

    def drop(self, request_id: str) -> None:
        """The request ended: its nonce is good for nothing any more."""
        self._nonces.pop(request_id, None)

    def __len__(self) -> int:
        return len(self._nonces)
