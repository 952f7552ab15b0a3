"""A phone in Python: what the phone page does with WebCrypto, done with `cryptography`.

It makes its own ECDSA P-256 key, exports the public key as SPKI DER, signs payloads as
WebCrypto does (IEEE P1363 `r||s`, base64url without padding), and computes the pairing
code the way the page does. Tests of every Away part use it.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from qoder_desktop.away.signed import ANSWER_TAG, AUTH_TAG, b64url_encode


def now_ms() -> int:
    """The phone's clock (`Date.now()`)."""
    return time.time_ns() // 1_000_000


@dataclass
class Phone:
    """One phone's key pair and what it signs."""

    name: str = "Pixel 7"
    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    device_id: str | None = None
    """The paired device's id (the pairing id while a pairing waits)."""

    @property
    def spki(self) -> bytes:
        """The public key as SPKI DER (`exportKey("spki", …)`)."""
        return self.key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)

    @property
    def public_key(self) -> str:
        """The public key as the page sends it: base64url(SPKI DER)."""
        return b64url_encode(self.spki)

    def sign(self, payload: str) -> str:
        """WebCrypto's ECDSA P-256/SHA-256 signature of `payload`: P1363, base64url."""
        der = self.key.sign(payload.encode("utf-8"), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return b64url_encode(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def code(self, token: str) -> str:
        """The pairing code this phone shows for `token` (what `crypto.subtle.digest`
        gives the page)."""
        digest = hashlib.sha256(b"qoder-desktop pairing v1\0" + token.encode() + b"\0"
                                + self.spki).digest()
        text = f"{int.from_bytes(digest[:8], 'big') % 10**8:08d}"
        return f"{text[:4]} {text[4:]}"

    def auth(self, challenge: str, *, device_id: str | None = None,
             time_ms: int | None = None) -> dict[str, Any]:
        """The auth message for `challenge`."""
        payload = json.dumps([AUTH_TAG, challenge, device_id or self.device_id,
                              now_ms() if time_ms is None else time_ms])
        return {"type": "auth", "payload": payload, "signature": self.sign(payload)}

    def answer(self, request_id: str, nonce: str, decision: str,
               content: dict[str, Any] | None = None, *, device_id: str | None = None,
               time_ms: int | None = None) -> dict[str, Any]:
        """The answer message for one request."""
        payload = json.dumps([ANSWER_TAG, request_id, nonce, decision, content or {},
                              device_id or self.device_id,
                              now_ms() if time_ms is None else time_ms])
        return {"type": "answer", "payload": payload, "signature": self.sign(payload)}


PAIRING_VECTOR = {
    "token": "pairing-token-for-the-test-vector",
    "spki_hex": ("3059301306072a8648ce3d020106082a8648ce3d03010703420004"
                 + "11" * 32 + "22" * 32),
}
"""The contract's test vector for the short code (docs/AWAY-PROTOCOL.md): a token and
an SPKI (a P-256 prefix with fixed coordinates; the code never parses the key)."""
