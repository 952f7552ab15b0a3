"""Away mode's server with 100 requests waiting: request → on the phone, answer → agent.

The real `AwayMode` on 127.0.0.1 (TLS from the desk's own CA, the real broker, ledger
and device registry over SQLite, an in-memory keyring), on the app's qasync loop, and a
Python phone over `websockets` that trusts only the desk's CA and signs as WebCrypto
does. 100 requests wait before the first sample. Each sample:

* request → on the phone: the agent's request enters the broker until the phone has
  parsed its `added` message (the view built: hidden characters, the risk lens, the
  offered rules);
* answer → agent unblocked: the phone sends a signed deny (signed beforehand, as the
  page signs before it sends) until the agent's `broker.request` returns, which is after
  the ledger row is written (the writer thread), as in the app.

The floor, interleaved in the same run: a bare Starlette WebSocket on uvicorn with the
same TLS context on the same loop — a message pushed from the server to the client, and
a message from the client until the server's handler has it. The browser's own time
(rendering) is not here; the phone page's browser tests cover the page.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import (
    REPO_ROOT,
    Figure,
    emit,
    judge,
    log,
    now,
    parse_args,
    setup_env,
    summarize,
)

sys.path.insert(0, str(REPO_ROOT / "tests"))  # the tests' in-memory keyring

WAITING = 100
ON_PHONE_MS = 1000.0
"""What a person is promised: while the page is open, requests reach it within a second."""
UNBLOCKED_MS = 250.0


def _signer() -> tuple[Any, bytes]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    spki = key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    return key, spki


def _sign(key: Any, payload: str) -> str:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    from qoder_desktop.away.signed import b64url_encode

    r, s = decode_dss_signature(key.sign(payload.encode(), ec.ECDSA(hashes.SHA256())))
    return b64url_encode(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


async def _bare_server(identity_ssl: ssl.SSLContext) -> tuple[Any, asyncio.Task[None], int,
                                                               dict[str, Any]]:
    """A bare TLS WebSocket on uvicorn: pushes what `state["push"]` gets, and resolves
    `state["got"]` with each message it receives."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket
    from uvicorn.config import Config

    from qoder_desktop.away.server import QuietServer, bind

    state: dict[str, Any] = {"push": asyncio.Queue(), "got": None}

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()

        async def pushing() -> None:
            while True:
                await websocket.send_text(await state["push"].get())

        pusher = asyncio.ensure_future(pushing())
        try:
            while True:
                text = await websocket.receive_text()
                json.loads(text)
                if state["got"] is not None and not state["got"].done():
                    state["got"].set_result(None)
        except Exception:
            pusher.cancel()

    sock = bind("127.0.0.1", 0)
    config = Config(Starlette(routes=[WebSocketRoute("/ws", endpoint)]), lifespan="off",
                    log_config=None, access_log=False, log_level="warning",
                    ws="websockets-sansio",
                    ssl_context_factory=lambda _config, _default: identity_ssl)
    server = QuietServer(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    return server, task, sock.getsockname()[1], state


async def measure(samples: int, root: Path) -> list[Figure]:
    """Run the samples; the figures."""
    import keyring
    from helpers.memory_keyring import MemoryKeyring as backend_type
    from websockets.asyncio.client import connect

    from qoder_desktop.approval.broker import ApprovalBroker
    from qoder_desktop.away.authority import DeskAuthority
    from qoder_desktop.away.devices import DeviceRegistry
    from qoder_desktop.away.mode import AwayMode
    from qoder_desktop.away.signed import ANSWER_TAG, AUTH_TAG, now_ms
    from qoder_desktop.config.secrets import SecretStore
    from qoder_desktop.domain.models import ApprovalRequest, Backend, SessionInfo
    from qoder_desktop.store.database import Database
    from qoder_desktop.store.ledger import Ledger
    keyring.set_keyring(backend_type())
    secrets = SecretStore(keyring.get_keyring(), extra_allowed=(backend_type,))
    db = Database.open(root / "away.sqlite3")
    db.upsert_session(SessionInfo(session_id="s1", name="bench", backend=Backend.CLAUDE,
                                  cwd=str(root)))
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    devices = DeviceRegistry(db, secrets)
    await devices.load()
    authority = await DeskAuthority.load_or_create(secrets, root)

    async def load() -> DeskAuthority:
        return authority

    mode = AwayMode(broker, devices, load, desk_name="bench desk")
    await mode.start("127.0.0.1", 0, time_limit_s=None)
    port = mode.port
    origin = f"https://127.0.0.1:{port}"
    client_ssl = ssl.create_default_context(cadata=authority.ca_pem.decode())
    key, spki = _signer()
    pairing = mode.pairings.claim(mode.pairings.offer(origin).token, spki, "Bench phone")
    device = await mode.pairings.confirm(pairing.pairing_id)

    def request(number: int) -> ApprovalRequest:
        return ApprovalRequest(session_id="s1", session_name="bench", backend=Backend.CLAUDE,
                               tool_name="Bash", cwd=str(root),
                               tool_input={"command": f"npm run build -- --job {number} | tee "
                                                      f"../log-{number}.txt"})

    waiting = [asyncio.ensure_future(broker.request(request(-i))) for i in range(WAITING)]
    on_phone: list[float] = []
    unblocked: list[float] = []
    bare_push: list[float] = []
    bare_receive: list[float] = []
    bare, bare_task, bare_port, bare_state = await _bare_server(
        authority.issue("127.0.0.1").ssl_context())
    async with connect(f"wss://127.0.0.1:{port}/ws", ssl=client_ssl, origin=origin,  # type: ignore[arg-type]
                       max_size=None) as phone, \
            connect(f"wss://127.0.0.1:{bare_port}/ws", ssl=client_ssl) as floor:
        hello = json.loads(await phone.recv())
        payload = json.dumps([AUTH_TAG, hello["challenge"], device.device_id, now_ms()])
        await phone.send(json.dumps({"type": "auth", "payload": payload,
                                     "signature": _sign(key, payload)}))
        snapshot = json.loads(await phone.recv())
        log(f"signed in; the snapshot holds {len(snapshot['requests'])} waiting requests")
        for number in range(samples):
            start = now()
            call = asyncio.ensure_future(broker.request(request(number)))
            while True:
                message = json.loads(await phone.recv())
                if message["type"] == "added":
                    break
            on_phone.append((now() - start) * 1000)
            shown = message["request"]
            payload = json.dumps([ANSWER_TAG, shown["id"], shown["nonce"], "deny",
                                  {"message": "benchmark"}, device.device_id, now_ms()])
            answer = json.dumps({"type": "answer", "payload": payload,
                                 "signature": _sign(key, payload)})
            start = now()
            await phone.send(answer)
            await call
            unblocked.append((now() - start) * 1000)
            # the floor, interleaved: a push, then a message to the server
            start = now()
            bare_state["push"].put_nowait(json.dumps(shown))
            json.loads(await floor.recv())
            bare_push.append((now() - start) * 1000)
            bare_state["got"] = asyncio.get_running_loop().create_future()
            start = now()
            await floor.send(answer)
            await bare_state["got"]
            bare_receive.append((now() - start) * 1000)
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    await mode.stop("the benchmark ended")
    bare.should_exit = True
    await bare_task
    db.close()
    return [
        Figure(f"request → on the phone ({WAITING} waiting)", "ms", summarize(on_phone),
               f"p95 ≤ {ON_PHONE_MS:g} ms", judge(summarize(on_phone)["p95"], ON_PHONE_MS),
               floor=summarize(bare_push), floor_label="bare TLS WebSocket push",
               judged="p95"),
        Figure(f"phone answer → agent unblocked ({WAITING} waiting)", "ms",
               summarize(unblocked), f"p95 ≤ {UNBLOCKED_MS:g} ms",
               judge(summarize(unblocked)["p95"], UNBLOCKED_MS),
               floor=summarize(bare_receive), floor_label="bare TLS WebSocket receive",
               judged="p95",
               notes=["Answer → unblocked includes verifying the signature, the nonce, "
                      "building the Decision and writing the ledger row (writer thread)."]),
    ]


def main() -> None:
    """Entry point (python -m benchmarks.bench_away)."""
    args = parse_args()
    root = setup_env()
    from benchmarks.qt_support import hard_exit, run_qasync

    emit(run_qasync(lambda: measure(30 if args.quick else 200, root)), args.out)
    hard_exit(0)


if __name__ == "__main__":
    main()
