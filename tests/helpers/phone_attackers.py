"""What attacks the phone page in the Away tests: another web origin, and a TLS interceptor.

- `EvilOrigin`: a second HTTPS server (its own name, e.g. `evil.test`, mapped to loopback
  like the desk's) serving a blank page; the test runs that origin's script in it
  (posting to the desk's API, opening the desk's WebSocket), as any web page the phone
  visits could. Its certificate is pinned too: the attacker's own site is valid.
- `TlsInterceptor`: a man in the middle on the desk's name with a certificate of its own
  (self-signed, not pinned, so the phone does not trust it) that would forward everything
  to the desk's server; it counts the connections whose TLS handshake succeeded.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import ssl
import tempfile
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


class SelfSigned:
    """A self-signed certificate for one host name, its key, and its SPKI pin."""

    def __init__(self, host: str) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
        now = datetime.now(UTC)
        certificate = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
            .sign(key, hashes.SHA256()))
        self.cert_pem = certificate.public_bytes(serialization.Encoding.PEM)
        self.key_pem = key.private_bytes(serialization.Encoding.PEM,
                                         serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption())
        spki = key.public_key().public_bytes(serialization.Encoding.DER,
                                             serialization.PublicFormat.SubjectPublicKeyInfo)
        self.spki_pin = base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")

    def server_context(self, folder: Path) -> ssl.SSLContext:
        """A TLS server context with this certificate (files in the test's `folder`)."""
        cert, key = folder / "cert.pem", folder / "key.pem"
        cert.write_bytes(self.cert_pem)
        key.write_bytes(self.key_pem)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        return context


class _BlankPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><html><head><title>evil</title></head><body>hi</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class EvilOrigin:
    """Another HTTPS origin on loopback (`https://<host>:<port>/`, a blank page)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.certificate = SelfSigned(host)
        self._folder = tempfile.TemporaryDirectory()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _BlankPage)
        context = self.certificate.server_context(Path(self._folder.name))
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The evil page's address."""
        return f"https://{self.host}:{self._server.server_address[1]}/"

    def __enter__(self) -> EvilOrigin:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._folder.cleanup()


class TlsInterceptor:
    """A TLS man in the middle in front of the desk's server, with its own certificate."""

    def __init__(self, host: str, target_port: int) -> None:
        self.host = host
        self.target_port = target_port
        self.certificate = SelfSigned(host)
        self.forwarded = 0
        """Connections whose TLS handshake with the phone succeeded (then forwarded)."""
        self._folder = tempfile.TemporaryDirectory()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> TlsInterceptor:
        context = self.certificate.server_context(Path(self._folder.name))
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0, ssl=context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)
        self._folder.cleanup()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.forwarded += 1
        client = ssl.create_default_context()
        client.check_hostname = False
        client.verify_mode = ssl.CERT_NONE
        try:
            up_reader, up_writer = await asyncio.open_connection(
                "127.0.0.1", self.target_port, ssl=client)
        except OSError:
            writer.close()
            return

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
