"""Signed payloads from a phone: WebCrypto's P1363 signatures verified, the exact arrays,
the clock window, and nonces that are good once."""

from __future__ import annotations

import json

import pytest
from helpers.phone import Phone, now_ms

from qoder_desktop.away.signed import (
    ANSWER_TAG,
    AUTH_TAG,
    NonceBook,
    SignedRefused,
    b64url_decode,
    b64url_encode,
    signed_device,
    verified_answer,
    verified_auth,
)

CHALLENGE = b64url_encode(b"c" * 32)


def test_base64url_round_trip_without_padding() -> None:
    for size in range(0, 40):
        data = bytes(range(size))
        text = b64url_encode(data)
        assert "=" not in text and "+" not in text and "/" not in text
        assert b64url_decode(text) == data


@pytest.mark.parametrize("text", ["ab==", "a+b/", "a", "ab c"])
def test_padding_and_another_alphabet_are_refused(text: str) -> None:
    with pytest.raises(SignedRefused):
        b64url_decode(text)


def test_a_phones_auth_is_verified_and_read() -> None:
    phone = Phone(device_id="dev-1")
    message = phone.auth(CHALLENGE)
    assert signed_device(message["payload"]) == "dev-1"
    proof = verified_auth(phone.spki, message["payload"], message["signature"],
                          challenge=CHALLENGE)
    assert (proof.device_id, proof.challenge) == ("dev-1", CHALLENGE)


def test_auth_for_another_challenge_or_by_another_key_is_refused() -> None:
    phone, other = Phone(device_id="dev-1"), Phone(device_id="dev-1")
    message = phone.auth(b64url_encode(b"x" * 32))
    with pytest.raises(SignedRefused) as refused:
        verified_auth(phone.spki, message["payload"], message["signature"],
                      challenge=CHALLENGE)
    assert refused.value.reason == "bad signature"
    message = phone.auth(CHALLENGE)
    with pytest.raises(SignedRefused) as refused:
        verified_auth(other.spki, message["payload"], message["signature"],
                      challenge=CHALLENGE)
    assert refused.value.reason == "bad signature"


def test_an_answer_is_verified_and_typed() -> None:
    phone = Phone(device_id="dev-1")
    message = phone.answer("req-1", "n1", "deny", {"message": "no"})
    answer = verified_answer(phone.spki, message["payload"], message["signature"])
    assert (answer.request_id, answer.nonce, answer.decision, answer.content,
            answer.device_id) == ("req-1", "n1", "deny", {"message": "no"}, "dev-1")


def test_a_tampered_payload_fails_its_signature() -> None:
    phone = Phone(device_id="dev-1")
    message = phone.answer("req-1", "n1", "deny", {"message": "no"})
    tampered = message["payload"].replace('"deny"', '"allow"')
    with pytest.raises(SignedRefused) as refused:
        verified_answer(phone.spki, tampered, message["signature"])
    assert refused.value.reason == "bad signature"


def test_a_der_signature_is_not_webcrypto_and_is_refused() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    phone = Phone(device_id="dev-1")
    payload = json.dumps([ANSWER_TAG, "req-1", "n1", "deny", {}, "dev-1", now_ms()])
    der = phone.key.sign(payload.encode(), ec.ECDSA(hashes.SHA256()))
    with pytest.raises(SignedRefused) as refused:
        verified_answer(phone.spki, payload, b64url_encode(der))
    assert refused.value.reason == "bad signature"


@pytest.mark.parametrize("offset_min, ok", [(-9, True), (9, True), (-11, False), (11, False)])
def test_the_clock_window_is_ten_minutes(offset_min: int, ok: bool) -> None:
    phone = Phone(device_id="dev-1")
    message = phone.answer("req-1", "n1", "allow", time_ms=now_ms() + offset_min * 60_000)
    if ok:
        verified_answer(phone.spki, message["payload"], message["signature"])
        return
    with pytest.raises(SignedRefused) as refused:
        verified_answer(phone.spki, message["payload"], message["signature"])
    assert refused.value.reason == "clock"


@pytest.mark.parametrize("payload", [
    json.dumps([ANSWER_TAG, "req-1", "n1", "allow", {}, "dev-1"]),  # too short
    json.dumps([AUTH_TAG, "req-1", "n1", "allow", {}, "dev-1", 1]),  # wrong tag
    json.dumps([ANSWER_TAG, "req-1", "n1", "grant_everything", {}, "dev-1", 1]),
    json.dumps([ANSWER_TAG, "req-1", "n1", "allow", [], "dev-1", 1]),
    json.dumps([ANSWER_TAG, "req-1", "n1", "allow", {}, "dev-1", True]),
    json.dumps({"request": "req-1"}),
    "not json",
])
def test_payloads_off_the_contract_are_invalid(payload: str) -> None:
    phone = Phone(device_id="dev-1")
    with pytest.raises(SignedRefused) as refused:
        verified_answer(phone.spki, payload, phone.sign(payload))
    assert refused.value.reason == "invalid"


def test_a_key_that_is_not_p256_is_invalid() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP384R1()).public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    phone = Phone(device_id="dev-1")
    message = phone.answer("req-1", "n1", "allow")
    with pytest.raises(SignedRefused) as refused:
        verified_answer(key, message["payload"], message["signature"])
    assert refused.value.reason == "invalid"


def test_a_nonce_is_good_once_for_its_request_only() -> None:
    book = NonceBook()
    first, second = book.issue("req-1"), book.issue("req-2")
    assert book.issue("req-1") == first  # the same until used
    assert not book.take("req-2", first)  # another request's nonce …
    assert not book.take("req-2", second)  # … spent the attempt
    assert book.take("req-1", first)
    assert not book.take("req-1", first)  # a replay
    assert book.issue("req-1") != first  # a fresh one for a retry


def test_a_nonce_is_dropped_when_its_request_ends() -> None:
    book = NonceBook()
    nonce = book.issue("req-1")
    book.drop("req-1")
    assert not book.take("req-1", nonce)
    assert len(book) == 0


def test_two_connections_hold_different_nonces() -> None:
    assert NonceBook().issue("req-1") != NonceBook().issue("req-1")
