"""The phone page pairs whatever the order of the desk's click and the page's socket.

The person may confirm at the desk as soon as the code shows there, before the page has
opened its socket; the page still learns its device and shows the requests.
"""

from __future__ import annotations

import asyncio

import pytest
from helpers.away_browser import AwayDesk, bash, launch_phone_browser
from helpers.phone_browser import BrowserThread

from qoder_desktop.away.pairing import PendingPairing

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

HOLD_AFTER_CLAIM = """
(() => {
  // Holds the page just after its pairing claim was answered, before it opens its
  // socket, until the test lets it go (`window.__release()`).
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  window.__release = () => release();
  const nativeFetch = window.fetch;
  window.fetch = async function (...args) {
    const response = await nativeFetch.apply(this, args);
    if (String(args[0]).endsWith("/api/pair")) await held;
    return response;
  };
})();
"""


async def test_a_confirmation_before_the_pages_socket_connects_still_pairs_it(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    await launch_phone_browser(chromium, desk)
    phone = await chromium.new_phone()
    await phone.do(lambda page: page.context.add_init_script(HOLD_AFTER_CLAIM))
    waiting = await desk.ask(bash("git status"))
    offer = desk.mode.pairings.offer(desk.origin)
    claimed: asyncio.Queue[PendingPairing] = asyncio.Queue()
    desk.mode.pairings.subscribe(lambda pending: pending and claimed.put_nowait(pending))

    await phone.goto(offer.url)
    pending = await asyncio.wait_for(claimed.get(), 15)
    device = await desk.mode.pairings.confirm(pending.pairing_id)  # the page has no socket
    assert await phone.js("() => window.__tap.sent.length") == 0
    await phone.js("() => window.__release()")

    await phone.card(waiting.request_id, lambda card: card.wait_for())
    stored = await phone.js("""async () => (await (await import('/static/keys.js'))
        .loadPhone()).deviceId""")
    assert stored == device.device_id
    await phone.tap_on_card(waiting.request_id, "Allow once")
    decision = await desk.decision(waiting.request_id)
    assert decision.device == device.label
    assert desk.mode.refused() == []
    assert phone.page_errors == []
