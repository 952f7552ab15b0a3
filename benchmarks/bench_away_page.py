"""Away mode in the browser: how fast a request reaches the phone page, an answer the agent.

The real desk in this process (broker over SQLite, device registry, `AwayMode`'s HTTPS +
WebSocket server with a certificate from the desk's own CA, on loopback) and the real
phone page in Debian's Chromium (Playwright on a thread of its own, a Pixel 7 viewport,
the CA trusted by its SPKI pin), paired as a person pairs. With 100 requests waiting on
the page, each sample adds one more:

- request → visible on the phone: the broker's ADDED event → the request's card in the
  page's DOM (a MutationObserver stamps `performance.timeOrigin + performance.now()`;
  both clocks are this machine's wall clock, in ms);
- answer → agent unblocked: the page's "Allow once" button clicked (stamped in the page
  right before `click()`) → the agent's `broker.request()` returns the allow (signing
  with WebCrypto, the socket, the desk's verification, the ledger write included).

Floor, same run, interleaved: a bare WebSocket over the same TLS on the same loop (a
bare Starlette endpoint on uvicorn, a blank page that appends a div per message): server
send → div in the DOM, and page send → the server's receive.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import socket
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.common import (
    REPO_ROOT,
    Figure,
    emit,
    judge,
    log,
    parse_args,
    setup_env,
    summarize,
)

sys.path.insert(0, str(REPO_ROOT / "tests"))  # the tests' in-memory keyring

T = TypeVar("T")
CHROMIUM = "/usr/bin/chromium"
HOST = "127.0.0.1"
WAITING = 100
VISIBLE_TARGET_MS = 1000.0
"""While the page is open, a request reaches it within a second (what Away mode promises)."""
CARD_STAMPS = """
window.__cards = {};
new MutationObserver((records) => {
  const at = performance.timeOrigin + performance.now();
  for (const record of records) {
    for (const node of record.addedNodes) {
      const id = node.dataset && node.dataset.requestId;
      if (id && !(id in window.__cards)) window.__cards[id] = at;
    }
  }
}).observe(document, {childList: true, subtree: true});
"""


def wall_ms() -> float:
    """This machine's wall clock in ms (what the page's timeOrigin + now() measures)."""
    return time.time_ns() / 1e6


class Browser:
    """Playwright's sync API on its own thread; the loop keeps serving meanwhile."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chromium")
        self._playwright: Any = None
        self.browser: Any = None

    async def run(self, step: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool,
                                                                partial(step, *args))

    def _launch(self, pin: str) -> None:
        import os

        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        args = ["--headless", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--disable-quic",
                f"--ignore-certificate-errors-spki-list={pin}"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")
        self.browser = self._playwright.chromium.launch(executable_path=CHROMIUM, args=args)

    def _page(self, bypass_csp: bool) -> Any:
        device = self._playwright.devices["Pixel 7"]
        context = self.browser.new_context(**device, bypass_csp=bypass_csp)
        context.set_default_timeout(30_000)
        context.add_init_script(CARD_STAMPS)
        return context.new_page()

    async def launch(self, pin: str) -> None:
        await self.run(self._launch, pin)

    async def page(self, *, bypass_csp: bool = False) -> Any:
        return await self.run(self._page, bypass_csp)

    def _close(self) -> None:
        if self.browser is not None:
            self.browser.close()
        if self._playwright is not None:
            self._playwright.stop()

    async def close(self) -> None:
        await self.run(self._close)
        self._pool.shutdown()


def _spki_pin(pem: bytes) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    spki = x509.load_pem_x509_certificate(pem).public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")


class EchoFloor:
    """A bare WebSocket endpoint on uvicorn over the same TLS: the least a socket to a
    page costs on this loop."""

    def __init__(self, ssl_context: Any) -> None:
        self._ssl = ssl_context
        self.socket: Any = None
        self.connected = asyncio.Event()
        self.received: asyncio.Queue[float] = asyncio.Queue()
        self.port = 0
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        from starlette.applications import Starlette
        from starlette.responses import Response
        from starlette.routing import Route, WebSocketRoute
        from starlette.websockets import WebSocketDisconnect
        from uvicorn.config import Config
        from uvicorn.server import Server

        async def index(_request: Any) -> Response:
            return Response("<!doctype html><title>floor</title><body></body>",
                            media_type="text/html")

        async def echo(websocket: Any) -> None:
            await websocket.accept()
            self.socket = websocket
            self.connected.set()
            with contextlib.suppress(WebSocketDisconnect):
                while True:
                    await websocket.receive_text()
                    self.received.put_nowait(wall_ms())

        app = Starlette(routes=[Route("/", index), WebSocketRoute("/ws", echo)])
        sock = socket.socket()
        sock.bind((HOST, 0))
        sock.listen(16)
        self.port = sock.getsockname()[1]
        ssl_context = self._ssl
        config = Config(app, host=HOST, port=self.port, lifespan="off", log_config=None,
                        log_level="warning", ws="websockets-sansio",
                        ssl_context_factory=lambda _c, _d: ssl_context)
        self._server = Server(config)
        self._task = asyncio.ensure_future(self._server.serve(sockets=[sock]))
        while not self._server.started:
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await asyncio.wait_for(self._task, 10)


FLOOR_PAGE = """(url) => new Promise((resolve) => {
    window.__floor = new WebSocket(url);
    window.__floor.onopen = () => resolve(true);
    window.__floor.onmessage = (event) => {
        const div = document.createElement('div');
        div.dataset.requestId = event.data;
        div.textContent = event.data;
        document.body.append(div);
    };
})"""


async def measure(samples: int, root: Path) -> list[Figure]:
    """Pair the page, fill it with 100 waiting requests, then take `samples` of each."""
    from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
    from qoder_desktop.away.authority import DeskAuthority
    from qoder_desktop.away.devices import DeviceRegistry
    from qoder_desktop.away.mode import AwayMode
    from qoder_desktop.config.secrets import SecretStore
    from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, SessionInfo
    from qoder_desktop.store.database import Database
    from qoder_desktop.store.ledger import Ledger

    db = Database.open(root / "bench.sqlite3")
    db.upsert_session(SessionInfo(session_id="bench", name="bench", backend=Backend.CLAUDE,
                                  cwd="/tmp"))
    from helpers.memory_keyring import MemoryKeyring

    backend = MemoryKeyring()
    secrets = SecretStore(backend, extra_allowed=(type(backend),))
    broker = ApprovalBroker(db, Ledger(db))
    devices = DeviceRegistry(db, secrets)
    await devices.load()
    added_at: dict[str, float] = {}

    def on_broker(event: BrokerEvent, request: ApprovalRequest, _d: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            added_at[request.request_id] = wall_ms()

    broker.subscribe(on_broker)

    async def authority() -> DeskAuthority:
        return await DeskAuthority.load_or_create(secrets, root / "data")

    mode = AwayMode(broker, devices, authority, desk_name="bench desk")
    await mode.start(HOST, 0, time_limit_s=None)
    desk_ca = await authority()
    floor = EchoFloor(desk_ca.issue(HOST).ssl_context())
    await floor.start()
    origin = f"https://{HOST}:{mode.port}"
    browser = Browser()
    await browser.launch(_spki_pin(desk_ca.ca_pem))
    agents: dict[str, asyncio.Future[Decision]] = {}
    unblocked: dict[str, float] = {}

    def ask(command: str) -> str:
        request = ApprovalRequest(session_id="bench", session_name="bench",
                                  backend=Backend.CLAUDE, tool_name="Bash",
                                  tool_input={"command": command}, cwd="/tmp")
        task = asyncio.ensure_future(broker.request(request))
        rid = request.request_id

        def stamp(_task: asyncio.Future[Decision]) -> None:
            unblocked.setdefault(rid, wall_ms())

        task.add_done_callback(stamp)
        agents[request.request_id] = task
        return request.request_id

    try:
        page = await browser.page()
        offer = mode.pairings.offer(origin)
        await browser.run(page.goto, offer.url)
        await browser.run(lambda: page.get_by_text("Waiting for you to confirm").wait_for())
        pending = mode.pairings.pending()
        assert pending is not None
        await mode.pairings.confirm(pending.pairing_id)
        await browser.run(lambda: page.get_by_text("Nothing is waiting").wait_for())
        for index in range(WAITING):
            ask(f"echo waiting {index}")
        await browser.run(lambda: page.locator("li.card").nth(WAITING - 1).wait_for())
        log(f"away page: paired, {WAITING} waiting on the page; {samples} samples")

        floor_page = await browser.page(bypass_csp=True)
        await browser.run(floor_page.goto, f"https://{HOST}:{floor.port}/")
        await browser.run(floor_page.evaluate, FLOOR_PAGE, f"wss://{HOST}:{floor.port}/ws")
        await asyncio.wait_for(floor.connected.wait(), 10)

        visible, answered, floor_visible, floor_answered = [], [], [], []
        for sample in range(samples):
            request_id = ask(f"npm run build -- --sample {sample}")
            seen = await browser.run(lambda rid=request_id: page.wait_for_function(
                "(id) => window.__cards[id]", arg=rid).json_value())
            visible.append(float(seen) - added_at[request_id])
            clicked = await browser.run(lambda rid=request_id: page.evaluate(
                """(id) => {
                    const card = document.querySelector(`li.card[data-request-id="${id}"]`);
                    const button = [...card.querySelectorAll('button')]
                        .find((b) => b.textContent === 'Allow once');
                    const at = performance.timeOrigin + performance.now();
                    button.click();
                    return at;
                }""", rid))
            decision = await asyncio.wait_for(agents[request_id], 30)
            assert decision.kind.value == "allow_once", decision
            answered.append(unblocked[request_id] - float(clicked))

            sent = wall_ms()
            await floor.socket.send_text(f"floor-{sample}")
            seen = await browser.run(lambda s=sample: floor_page.wait_for_function(
                "(id) => window.__cards[id]", arg=f"floor-{s}").json_value())
            floor_visible.append(float(seen) - sent)
            clicked = await browser.run(floor_page.evaluate, """() => {
                const at = performance.timeOrigin + performance.now();
                window.__floor.send('answer');
                return at;
            }""")
            floor_answered.append(await asyncio.wait_for(floor.received.get(), 10)
                                  - float(clicked))
        still = sum(1 for task in agents.values() if not task.done())
        assert still == WAITING, still
    finally:
        await browser.close()
        await floor.stop()
        await mode.stop("benchmark done")
        for task in agents.values():
            task.cancel()
        await asyncio.gather(*agents.values(), return_exceptions=True)
        broker.close()
        db.close()

    notes = [f"{WAITING} requests waiting on the page throughout; Chromium {CHROMIUM}, "
             "Pixel 7 viewport, TLS from the desk's CA (pinned)."]
    shown = summarize(visible)
    return [
        Figure(f"away page: request → visible on the phone page ({WAITING} waiting)", "ms",
               shown, f"p95 ≤ {VISIBLE_TARGET_MS:g} ms", judge(shown["p95"], VISIBLE_TARGET_MS),
               notes=notes, floor=summarize(floor_visible),
               floor_label="bare WebSocket: server send → div in the DOM", judged="p95"),
        Figure(f"away page: answer on the phone → agent unblocked ({WAITING} waiting)", "ms",
               summarize(answered), floor=summarize(floor_answered),
               floor_label="bare WebSocket: page send → server receive", judged="p95",
               notes=["Includes WebCrypto signing, the desk's verification and the ledger "
                      "write before the agent's request returns."]),
    ]


def main() -> int:
    """Run the benchmark and print or write its figures."""
    args = parse_args()
    root = setup_env()
    if not Path(CHROMIUM).exists():
        log(f"away page: {CHROMIUM} is missing (apt-get install chromium); skipped")
        emit([Figure("away page: skipped (no Chromium)", "ms", {"value": 0.0})], args.out)
        return 0
    samples = 10 if args.quick else 40
    emit(asyncio.run(measure(samples, root)), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
