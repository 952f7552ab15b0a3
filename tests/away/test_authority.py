"""The desk's CA and the server's certificate: real path validation, a real TLS handshake."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from cryptography.x509.verification import PolicyBuilder, Store, VerificationError
from helpers.memory_keyring import MemoryKeyring
from keyring.backends import fail

from qoder_desktop.away.authority import (
    AuthorityUnavailable,
    DeskAuthority,
    HostNotCovered,
    ServerIdentity,
)
from qoder_desktop.away.keyring_entries import CA_KEY_ENTRY
from qoder_desktop.config.secrets import SERVICE_NAME, RedactSecrets, SecretStore


def _store(keyring: MemoryKeyring) -> SecretStore:
    return SecretStore(keyring, extra_allowed=(MemoryKeyring,))


def _verify(authority: DeskAuthority, pem: bytes, subject: x509.GeneralName) -> None:
    """Validate `pem` as a server certificate for `subject` with the CA as the only root."""
    leaf = x509.load_pem_x509_certificate(pem)
    verifier = (PolicyBuilder().store(Store([authority.certificate]))
                .time(datetime.now(UTC)).build_server_verifier(subject))
    verifier.verify(leaf, [])


def _forged(authority: DeskAuthority, keyring: MemoryKeyring, name: x509.GeneralName) -> bytes:
    """A server certificate for `name` signed with the (leaked) CA key from the keyring."""
    ca_key = serialization.load_pem_private_key(
        keyring.passwords[(SERVICE_NAME, CA_KEY_ENTRY)].encode(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "forged")]))
        .issuer_name(authority.certificate.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([name]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256()))
    return certificate.public_bytes(serialization.Encoding.PEM)


@pytest.mark.asyncio
async def test_server_certificates_for_a_lan_address_and_a_local_name_verify(
        memory_keyring: MemoryKeyring, tmp_path: Path) -> None:
    authority = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    lan = authority.issue("192.168.1.20")
    _verify(authority, lan.cert_pem, x509.IPAddress(ipaddress.ip_address("192.168.1.20")))
    _verify(authority, authority.issue("desk.test").cert_pem, x509.DNSName("desk.test"))
    _verify(authority, authority.issue("100.101.102.103").cert_pem,
            x509.IPAddress(ipaddress.ip_address("100.101.102.103")))
    leaf = x509.load_pem_x509_certificate(lan.cert_pem)
    assert leaf.not_valid_after_utc - leaf.not_valid_before_utc <= timedelta(days=398)
    assert (tmp_path / "away" / "desk-ca.crt").read_bytes() == authority.ca_pem
    _verify(authority, authority.issue("[fe80::1%wlan0]").cert_pem,
            x509.IPAddress(ipaddress.ip_address("fe80::1")))
    ca = authority.certificate
    constraints = ca.extensions.get_extension_for_class(x509.NameConstraints)
    basic = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and basic.critical and basic.value.path_length == 0
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    assert ca.not_valid_after_utc - ca.not_valid_before_utc > timedelta(days=3600)
    common_name = ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert str(common_name).startswith("Qoder Desktop on ")


@pytest.mark.asyncio
@pytest.mark.parametrize("name", [x509.DNSName("bank.example.com"),
                                  x509.IPAddress(ipaddress.ip_address("8.8.8.8"))])
async def test_a_leaked_ca_key_cannot_vouch_for_a_public_site(
        memory_keyring: MemoryKeyring, tmp_path: Path, name: x509.GeneralName) -> None:
    authority = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    inside = x509.DNSName("forged.test")  # the same forgery inside the constraints passes
    _verify(authority, _forged(authority, memory_keyring, inside), inside)
    with pytest.raises(VerificationError, match="no permitted name constraints matched"):
        _verify(authority, _forged(authority, memory_keyring, name), name)
    with pytest.raises(HostNotCovered, match="private or local address"):
        authority.issue(str(name.value))


@pytest.mark.asyncio
async def test_the_server_key_never_sits_in_a_file(
        memory_keyring: MemoryKeyring, tmp_path: Path, isolated_home: Path) -> None:
    import tempfile

    authority = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    identity = authority.issue("desk.test")
    before = set(Path(tempfile.gettempdir()).iterdir())
    context = identity.ssl_context()
    assert isinstance(context, ssl.SSLContext)
    assert set(Path(tempfile.gettempdir()).iterdir()) == before
    secrets = [identity._key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()),
        memory_keyring.passwords[(SERVICE_NAME, CA_KEY_ENTRY)].encode()]
    for folder in (tmp_path, isolated_home.parent):
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert not any(secret in data for secret in secrets), path
                assert b"PRIVATE KEY" not in data, path
    for shown in (repr(identity), str(identity), repr(authority), str(authority)):
        assert "PRIVATE" not in shown and "_key" not in shown
    assert identity.spki_pin in repr(identity)


@pytest.mark.asyncio
async def test_the_ca_key_never_reaches_a_log(memory_keyring: MemoryKeyring,
                                              tmp_path: Path) -> None:
    redactor = RedactSecrets()
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,), redactor=redactor)
    await DeskAuthority.load_or_create(store, tmp_path)
    pem = memory_keyring.passwords[(SERVICE_NAME, CA_KEY_ENTRY)]
    assert redactor.redact(f"oops: {pem}") == "oops: ********"


async def _handshake(identity: ServerIdentity, trusted: bytes, server_hostname: str) -> bytes:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello from the desk")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=identity.ssl_context())
    port = server.sockets[0].getsockname()[1]
    client = ssl.create_default_context(cadata=trusted.decode())
    try:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client, server_hostname=server_hostname)
        data = await reader.read()
        writer.close()
        return data
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.asyncio
async def test_a_phone_that_installed_the_ca_connects_and_another_ca_fails(
        memory_keyring: MemoryKeyring, tmp_path: Path) -> None:
    authority = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    for host in ("desk.test", "127.0.0.1"):
        assert await _handshake(authority.issue(host), authority.ca_pem,
                                host) == b"hello from the desk"
    other = await DeskAuthority.load_or_create(_store(MemoryKeyring()), tmp_path / "other")
    assert other.ca_fingerprint != authority.ca_fingerprint
    with pytest.raises(ssl.SSLCertVerificationError):
        await _handshake(other.issue("desk.test"), authority.ca_pem, "desk.test")
    with pytest.raises(ssl.SSLCertVerificationError):  # the right CA, the wrong name
        await _handshake(authority.issue("other.test"), authority.ca_pem, "desk.test")


@pytest.mark.asyncio
async def test_the_ca_survives_a_restart_and_a_wiped_keyring_makes_a_new_one(
        memory_keyring: MemoryKeyring, tmp_path: Path) -> None:
    first = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    assert first.created and not first.fingerprint_changed and first.notice is None
    again = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    assert again.ca_fingerprint == first.ca_fingerprint and not again.created
    assert len(first.ca_fingerprint.split(":")) == 32

    memory_keyring.passwords.clear()
    replaced = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    assert replaced.ca_fingerprint != first.ca_fingerprint
    assert replaced.fingerprint_changed and replaced.previous_fingerprint == first.ca_fingerprint
    assert replaced.notice is not None and "must install the new certificate" in replaced.notice
    assert (tmp_path / "away" / "desk-ca.crt").read_bytes() == replaced.ca_pem


@pytest.mark.asyncio
async def test_a_certificate_on_disk_that_is_not_the_keyrings_is_replaced(
        memory_keyring: MemoryKeyring, tmp_path: Path) -> None:
    first = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    stranger = await DeskAuthority.load_or_create(_store(MemoryKeyring()), tmp_path / "x")
    (tmp_path / "away" / "desk-ca.crt").write_bytes(stranger.ca_pem)
    loaded = await DeskAuthority.load_or_create(_store(memory_keyring), tmp_path)
    assert loaded.fingerprint_changed
    assert loaded.ca_fingerprint not in (first.ca_fingerprint, stranger.ca_fingerprint)


@pytest.mark.asyncio
async def test_without_a_trusted_keyring_away_mode_says_why(tmp_path: Path) -> None:
    with pytest.raises(AuthorityUnavailable, match="OS keyring only"):
        await DeskAuthority.load_or_create(SecretStore(fail.Keyring()), tmp_path)
    assert not (tmp_path / "away" / "desk-ca.crt").exists()
