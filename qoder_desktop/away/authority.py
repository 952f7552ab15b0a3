"""The desk's own certificate authority, and the HTTPS certificate of Away mode's server.

A phone trusts the page it runs only as far as it trusts the TLS in front of it, and it
cannot pin a self-signed certificate. So each install makes its own CA (EC P-256, ten
years) that the phone installs once. The CA is **name-constrained** (a critical
NameConstraints extension): it can only vouch for private and local addresses
(`PERMITTED_NETWORKS`) and for names under `PERMITTED_DOMAINS`, so even a leaked CA key
cannot mint a certificate a phone would accept for a public site.

The CA's private key lives in the OS keyring only (`keyring_entries.CA_KEY_ENTRY`); its
certificate (public) is written to ``<data_dir>/away/desk-ca.crt``. When the keyring has
no key, or one that does not match the certificate on disk, a new CA is made and
`DeskAuthority.fingerprint_changed` says so: phones must install the new certificate.

`DeskAuthority.issue` makes the server's certificate for one host (30 days, since phones
refuse long-lived server certificates); `ServerIdentity.ssl_context` loads it into a TLS
server context without the key ever reaching a file unencrypted. Qt-free.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import ipaddress
import os
import re
import secrets
import socket
import ssl
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NoReturn

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from qoder_desktop.away.keyring_entries import (
    CA_KEY_ENTRY,
    KeyringUnavailable,
    read_entry,
    write_entry,
)
from qoder_desktop.config.keyring_calls import keyring_call
from qoder_desktop.config.private_file import write_private
from qoder_desktop.config.secrets import SecretStore, SecretStoreError

PRODUCT = "Qoder Desktop"
CA_FILE_NAME = "desk-ca.crt"
CA_VALIDITY = timedelta(days=3650)
SERVER_VALIDITY = timedelta(days=30)
"""Phones refuse server certificates valid for more than 398 days; a month is plenty."""
CLOCK_SLACK = timedelta(hours=1)
"""Certificates start this much in the past, so a phone whose clock is behind accepts them."""

PERMITTED_NETWORKS: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(net) for net in (
        "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",  # private LANs (RFC 1918)
        "100.64.0.0/10",  # carrier-grade NAT, where Tailscale hands out addresses
        "169.254.0.0/16",  # link-local
        "127.0.0.0/8",  # loopback (tests)
        "fc00::/7", "fe80::/10", "::1/128",  # unique-local, link-local, loopback
    ))
"""The addresses the desk's CA may vouch for: private and local networks only."""
PERMITTED_DOMAINS: tuple[str, ...] = ("local", "home.arpa", "internal", "lan", "test")
"""The names (and every name under them) the desk's CA may vouch for."""


SERVER_SUBJECT = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{PRODUCT} away server")])
"""The server certificate's subject. Not the host: OpenSSL checks a host-like common name
against the CA's DNS constraints, so an IP literal there would break the chain (clients
match the host against the SAN only)."""


class AuthorityUnavailable(RuntimeError):
    """The desk's CA cannot be loaded or made; the message is a sentence for the person."""


class HostNotCovered(ValueError):
    """The host is outside what the desk's CA may vouch for (a phone would refuse it)."""


def fingerprint_of(der: bytes) -> str:
    """SHA-256 of a certificate's DER as phones show it: ``"AB:CD:…"``."""
    return ":".join(f"{byte:02X}" for byte in hashlib.sha256(der).digest())


def host_general_name(host: str) -> x509.GeneralName:
    """The SAN entry for `host`: an IP address for an IP literal, else a DNS name.

    Raises:
        HostNotCovered: the host is neither a private/local address nor a name under
            `PERMITTED_DOMAINS`.
    """
    text = host.strip().strip("[]").split("%", 1)[0]  # no brackets, no IPv6 zone
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        name = text.rstrip(".").lower()
        if not _is_dns_name(name) or not any(
                name == domain or name.endswith("." + domain) for domain in PERMITTED_DOMAINS):
            _not_covered(host)
        return x509.DNSName(name)
    if not any(address.version == net.version and address in net
               for net in PERMITTED_NETWORKS):
        _not_covered(host)
    return x509.IPAddress(address)


def _is_dns_name(name: str) -> bool:
    return bool(name) and len(name) <= 253 and all(
        re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", label) for label in name.split("."))


def _not_covered(host: str) -> NoReturn:
    domains = ", ".join("." + domain for domain in PERMITTED_DOMAINS)
    raise HostNotCovered(
        f"Away mode cannot serve {host!r}: its certificate can only name a private or local "
        f"address (LAN, VPN such as Tailscale, link-local) or a name ending in {domains}.")


class ServerIdentity:
    """The server's certificate for one host and its private key (kept in memory only).

    Attributes:
        host: the host the certificate names.
        cert_pem: the certificate (PEM).
        chain_pem: the certificate followed by the CA's certificate (PEM).
        spki_pin: base64 SHA-256 of the certificate's SubjectPublicKeyInfo (the format of
            Chromium's ``--ignore-certificate-errors-spki-list``).
    """

    __slots__ = ("_key", "cert_pem", "chain_pem", "host", "spki_pin")

    def __init__(self, host: str, certificate: x509.Certificate, key: ec.EllipticCurvePrivateKey,
                 ca_pem: bytes) -> None:
        self.host = host
        self.cert_pem = certificate.public_bytes(serialization.Encoding.PEM)
        self.chain_pem = self.cert_pem + ca_pem
        spki = certificate.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.spki_pin = base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")
        self._key = key

    def ssl_context(self) -> ssl.SSLContext:
        """A TLS (1.2 or later) server context with this certificate and the CA's.

        Python loads keys from files only, so the key goes to a private (0600) temporary
        file encrypted with a random password held in memory, is loaded with that
        password, and the file is deleted at once: nothing usable ever sits on a disk.
        """
        password = secrets.token_bytes(32)
        encrypted = self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(password))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        handle, path = tempfile.mkstemp(prefix="qoder-desktop-away-", suffix=".pem")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(self.chain_pem + encrypted)
            context.load_cert_chain(path, password=password)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return context

    def __repr__(self) -> str:
        return f"ServerIdentity(host={self.host!r}, spki_pin={self.spki_pin!r})"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:
        raise TypeError("a ServerIdentity holds a private key and cannot be pickled")


@dataclass(frozen=True)
class _Loaded:
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    created: bool
    replaced: bool = False
    previous_fingerprint: str | None = None


class DeskAuthority:
    """The per-install CA: EC P-256, name-constrained, its key in the keyring only.

    Attributes:
        ca_pem: the CA's certificate (PEM, public); also at `ca_path`.
        ca_der: the same certificate (DER).
        ca_fingerprint: SHA-256 of the DER, ``"AB:CD:…"``, as phones show it.
        ca_path: ``<data_dir>/away/desk-ca.crt``.
        created: True when this load made the CA (none was usable).
        fingerprint_changed: True when it replaced one that phones may have installed (a
            certificate on disk or a key in the keyring was there, but not a matching pair).
        previous_fingerprint: the fingerprint of the certificate it replaced, when known.
    """

    __slots__ = ("_certificate", "_key", "ca_der", "ca_fingerprint", "ca_path", "ca_pem",
                 "created", "fingerprint_changed", "previous_fingerprint")

    def __init__(self, key: ec.EllipticCurvePrivateKey, certificate: x509.Certificate,
                 ca_path: Path, *, created: bool = False, replaced: bool = False,
                 previous_fingerprint: str | None = None) -> None:
        self._key = key
        self._certificate = certificate
        self.ca_path = ca_path
        self.ca_pem = certificate.public_bytes(serialization.Encoding.PEM)
        self.ca_der = certificate.public_bytes(serialization.Encoding.DER)
        self.ca_fingerprint = fingerprint_of(self.ca_der)
        self.created = created
        self.previous_fingerprint = previous_fingerprint
        self.fingerprint_changed = replaced

    @property
    def certificate(self) -> x509.Certificate:
        """The CA's certificate."""
        return self._certificate

    @property
    def notice(self) -> str | None:
        """A sentence for the person when the CA was replaced, else None."""
        if not self.fingerprint_changed:
            return None
        return ("Away mode made a new certificate authority (its key was missing from the "
                "keyring or did not match the certificate on disk), so its fingerprint "
                f"changed to {self.ca_fingerprint}. Phones must install the new certificate "
                "and remove the old one.")

    @classmethod
    async def load_or_create(cls, secrets: SecretStore, data_dir: Path) -> DeskAuthority:
        """The desk's CA from the keyring and ``data_dir/away``, made on first use.

        Runs on the keyring thread, so the loop keeps serving while the keyring answers.

        Raises:
            AuthorityUnavailable: no trusted keyring, it failed or did not answer, or the
                certificate could not be written.
        """
        ca_path = data_dir / "away" / CA_FILE_NAME
        try:
            loaded = await keyring_call(lambda: _load_or_create(secrets, ca_path),
                                        "read Away mode's certificate key")
        except (KeyringUnavailable, SecretStoreError) as exc:
            raise AuthorityUnavailable(str(exc)) from None
        return cls(loaded.key, loaded.certificate, ca_path, created=loaded.created,
                   replaced=loaded.replaced, previous_fingerprint=loaded.previous_fingerprint)

    def issue(self, host: str) -> ServerIdentity:
        """A fresh server certificate (and key) for `host`, an IP literal or a DNS name.

        Raises:
            HostNotCovered: the CA's name constraints do not cover `host`.
        """
        name = host_general_name(host)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        label = str(name.value)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(SERVER_SUBJECT)
            .issuer_name(self._certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - CLOCK_SLACK)
            .not_valid_after(now + SERVER_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(digital_signature=True), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.SubjectAlternativeName([name]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256()))
        return ServerIdentity(label, certificate, key, self.ca_pem)

    def __repr__(self) -> str:
        return f"DeskAuthority(ca_fingerprint={self.ca_fingerprint!r})"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:
        raise TypeError("a DeskAuthority holds a private key and cannot be pickled")


def _key_usage(*, digital_signature: bool = False, cert_sign: bool = False) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=digital_signature, content_commitment=False,
        key_encipherment=False, data_encipherment=False, key_agreement=False,
        key_cert_sign=cert_sign, crl_sign=cert_sign, encipher_only=False,
        decipher_only=False)


def _load_or_create(store: SecretStore, ca_path: Path) -> _Loaded:
    """The CA from the keyring and the disk, or a new one (blocking; keyring thread)."""
    pem = read_entry(store, CA_KEY_ENTRY)
    on_disk = _read_certificate(ca_path)
    key = _parse_key(pem) if pem else None
    if key is not None and on_disk is not None and _same_public_key(key, on_disk):
        return _Loaded(key, on_disk, created=False)
    previous = (fingerprint_of(on_disk.public_bytes(serialization.Encoding.DER))
                if on_disk is not None else None)
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = _make_ca(key)
    write_entry(store, CA_KEY_ENTRY, key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode("ascii"))
    try:
        write_private(ca_path, certificate.public_bytes(serialization.Encoding.PEM).decode())
    except OSError as exc:
        raise AuthorityUnavailable(f"Away mode could not write its certificate to {ca_path} "
                                   f"({exc.strerror or type(exc).__name__}).") from None
    return _Loaded(key, certificate, created=True, replaced=on_disk is not None or bool(pem),
                   previous_fingerprint=previous)


def _read_certificate(path: Path) -> x509.Certificate | None:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None


def _parse_key(pem: str) -> ec.EllipticCurvePrivateKey | None:
    try:
        key = serialization.load_pem_private_key(pem.encode("ascii"), password=None)
    except (ValueError, TypeError, UnicodeEncodeError):
        return None
    return key if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _same_public_key(key: ec.EllipticCurvePrivateKey, certificate: x509.Certificate) -> bool:
    def spki(public: object) -> bytes:
        assert isinstance(public, ec.EllipticCurvePublicKey)
        return public.public_bytes(serialization.Encoding.DER,
                                   serialization.PublicFormat.SubjectPublicKeyInfo)

    public = certificate.public_key()
    return isinstance(public, ec.EllipticCurvePublicKey) and spki(public) == spki(
        key.public_key())


def _machine_name() -> str:
    cleaned = re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname())
    return cleaned[:24] or "desk"


def _make_ca(key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    """A self-signed, name-constrained CA certificate for `key`."""
    install_id = secrets.token_hex(4)
    subject = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, PRODUCT),
        x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, f"install {install_id}"),
        x509.NameAttribute(NameOID.COMMON_NAME,
                           f"{PRODUCT} on {_machine_name()} ({install_id})"),
    ])
    permitted: list[x509.GeneralName] = [x509.IPAddress(net) for net in PERMITTED_NETWORKS]
    permitted += [x509.DNSName(domain) for domain in PERMITTED_DOMAINS]
    now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SLACK)
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(x509.NameConstraints(permitted_subtrees=permitted,
                                            excluded_subtrees=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256()))
