"""A real phone browser for the Away tests: Debian's Chromium driven by Playwright.

The desk's server runs on the app's qasync loop in the test's thread, so Playwright's
synchronous API runs on a thread of its own (`BrowserThread`): the test awaits each
browser step (`await phone.do(lambda page: …)`) and the loop goes on serving the page
meanwhile. Browsers cannot be downloaded here: Playwright launches `/usr/bin/chromium`
(never `playwright install`), in a fresh profile each launch (Playwright's own temporary
user-data dir), with the network chatter of a first start turned off.

Host names are fake LAN names mapped to loopback (`--host-resolver-rules`), so the page is
a real secure context only because its certificate is trusted, never because it is
`localhost`; that trust is an SPKI pin (`--ignore-certificate-errors-spki-list`), the way
a phone trusts the desk's CA.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's `chromium` package (.ci/run installs it)."""

QUIET_START = ("--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", "--disable-quic")
"""No update checks, sync or QUIC: a test browser reaches nothing but loopback."""

PHONE = "Pixel 7"
"""The phone the tests hold (Playwright's device descriptor: viewport, touch, user agent)."""

STEP_TIMEOUT_MS = 15_000
"""How long one browser step may wait for what it expects before the test fails."""

SOCKET_TAP = """
(() => {
  // The test's window into the page's WebSocket and signatures. It changes nothing the
  // page does unless the test asks it to hold answers back (to replay or tamper with them).
  const tap = window.__tap = {
    sent: [], received: [], held: [], holding: false, sockets: [], keys: [],
  };
  const nativeSend = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!tap.sockets.includes(this)) {
      tap.sockets.push(this);
      this.addEventListener("message", (event) => tap.received.push(event.data));
    }
    tap.sent.push(data);
    if (tap.holding && typeof data === "string" && data.startsWith('{"type":"answer"')) {
      tap.held.push(data);
      return;
    }
    return nativeSend.call(this, data);
  };
  tap.sendRaw = (data) => nativeSend.call(tap.sockets[tap.sockets.length - 1], data);
  const nativeSign = SubtleCrypto.prototype.sign;
  SubtleCrypto.prototype.sign = function (algorithm, key, data) {
    tap.keys.push(key);
    return nativeSign.call(this, algorithm, key, data);
  };
})();
"""


def chromium_or_skip() -> Path:
    """Debian's Chromium, or skip the test saying how to get it (in CI the skip fails:
    `tests/helpers/safety_skips.py`)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: `apt-get install chromium` (Debian's package; "
                    "Playwright's own browsers cannot be downloaded here)")
    return CHROMIUM


def launch_args(pins: Iterable[str], host_rules: Iterable[str]) -> list[str]:
    """Chromium's arguments: quiet start, the host map and the pinned certificates."""
    args = [*QUIET_START,
            "--host-resolver-rules=" + ", ".join(host_rules),
            "--ignore-certificate-errors-spki-list=" + ",".join(pins)]
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium's sandbox refuses to run as root
    return args


class BrowserThread:
    """One thread that owns Playwright and the browser; every step runs there."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chromium")
        self._playwright: Any = None
        self.browser: Any = None
        self.devices: dict[str, Any] = {}

    async def run(self, step: Callable[..., T], *args: Any) -> T:
        """Run `step(*args)` on the browser's thread while the loop goes on."""
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, partial(step, *args))

    def _launch(self, args: list[str]) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self.devices = dict(self._playwright.devices)
        self.browser = self._playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--headless", *args])

    async def launch(self, *, pins: Iterable[str], host_rules: Iterable[str]) -> None:
        """Start Chromium trusting only the certificates whose SPKI is in `pins`."""
        await self.run(self._launch, launch_args(pins, host_rules))

    def _new_phone(self, tap: bool) -> PhonePage:
        context = self.browser.new_context(**self.devices[PHONE])
        context.set_default_timeout(STEP_TIMEOUT_MS)
        if tap:
            context.add_init_script(SOCKET_TAP)
        page = context.new_page()
        phone = PhonePage(self, context, page)
        page.on("console", lambda message: phone.console.append(message.text))
        page.on("pageerror", lambda error: phone.page_errors.append(str(error)))
        return phone

    async def new_phone(self, *, tap: bool = True) -> PhonePage:
        """A new browser context (its own IndexedDB, as another phone) in a phone viewport."""
        return await self.run(self._new_phone, tap)

    def _close(self) -> None:
        try:
            if self.browser is not None:
                self.browser.close()
        finally:
            if self._playwright is not None:
                self._playwright.stop()

    def close(self) -> None:
        """Close the browser and Playwright, from any thread, and end the thread."""
        self._pool.submit(self._close).result(timeout=60)
        self._pool.shutdown(wait=True)


@dataclass
class PhonePage:
    """One phone: a browser context with one page, driven from the test's loop."""

    thread: BrowserThread
    context: Any
    page: Any
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    async def do(self, step: Callable[[Any], T]) -> T:
        """Run `step(page)` on the browser's thread (Playwright waits there, not here)."""
        return await self.thread.run(step, self.page)

    async def goto(self, url: str) -> Any:
        """Open `url`; the response (None for a fragment-only change)."""
        return await self.do(lambda page: page.goto(url))

    async def js(self, expression: str, argument: Any = None) -> Any:
        """Evaluate `expression` in the page (a function expression gets `argument`)."""
        return await self.do(lambda page: page.evaluate(expression, argument))

    async def card(self, request_id: str, step: Callable[[Any], T]) -> T:
        """Run `step(locator)` on the card of `request_id` (waiting for it to appear)."""
        return await self.do(lambda page: step(
            page.locator(f'li.card[data-request-id="{request_id}"]')))

    async def tap_on_card(self, request_id: str, button: str) -> None:
        """Tap the button named `button` on the card of `request_id`."""
        await self.card(request_id, lambda card: card.get_by_role(
            "button", name=button, exact=True).click())

    async def wait_text(self, text: str) -> None:
        """Wait until `text` is visible somewhere on the page."""
        await self.do(lambda page: page.get_by_text(text).first.wait_for())

    async def wait_gone(self, request_id: str) -> None:
        """Wait until the card of `request_id` is not on the page."""
        await self.card(request_id, lambda card: card.wait_for(state="detached"))

    async def sent_answers(self) -> list[str]:
        """Every answer frame the page sent (or held), in order, as sent."""
        frames: list[str] = await self.js("() => window.__tap.sent")
        return [frame for frame in frames if frame.startswith('{"type":"answer"')]

    async def send_raw(self, frame: str) -> int:
        """Send `frame` on the page's current socket as it is, past the page's own code;
        how many frames the page had received by then (for `result_for`)."""
        count: int = await self.js("""(frame) => {
            window.__tap.sendRaw(frame);
            return window.__tap.received.length;
        }""", frame)
        return count

    async def result_for(self, request_id: str | None, since: int = 0) -> dict[str, Any]:
        """The desk's first `result` message for `request_id` among the frames received
        after the first `since` (waits for it). An answer whose signature fails names no
        request (the desk reads nothing from an unverified payload): `request_id` None."""
        frame: str = await self.do(lambda page: page.wait_for_function(
            """([id, since]) => window.__tap.received.slice(since).find((frame) => {
                const message = JSON.parse(frame);
                return message.type === "result" && message.id === id;
            })""", arg=[request_id, since]).json_value())
        result: dict[str, Any] = json.loads(frame)
        return result
