"""The phone server over real TLS (the desk's own CA is the client's only trust root): the
pairing claim and its limits, the exact Host and Origin, only the listed paths with the
security headers, and the plain-HTTP certificate helper."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from helpers.away_rig import HOST, AwayRig, away_rig, pair, phone_socket
from helpers.phone import Phone
from websockets.exceptions import InvalidStatus

from qoder_desktop.away.server import PageFiles, bind
from qoder_desktop.domain.models import (
    Decision,
)
from qoder_desktop.store.database import Database

QUESTION = {"questions": [{"question": "Which database?", "header": "DB", "options": [
    {"label": "SQLite", "description": "a file"}, {"label": "Postgres"}]}]}


def still_waiting(rig: AwayRig, call: asyncio.Task[Decision]) -> bool:
    """The request is still waiting for a person: nothing answered it."""
    return not call.done() and len(rig.broker.approvals()) >= 1


@pytest.mark.asyncio
async def test_pairing_claims_are_rate_limited(rig: AwayRig) -> None:
    async with rig.http() as http:
        statuses = [(await http.post("/api/pair", json={
            "token": "guess", "public_key": Phone().public_key, "name": "x"},
            headers={"Origin": rig.origin})).status_code for _ in range(11)]
    assert statuses == [403] * 10 + [429]


@pytest.mark.asyncio
async def test_a_malformed_claim_is_400(rig: AwayRig) -> None:
    async with rig.http() as http:
        for body in ({"token": "t"}, {"token": "t", "public_key": "a+b=", "name": "x"},
                     {"token": 1, "public_key": Phone().public_key, "name": "x"}):
            response = await http.post("/api/pair", json=body,
                                        headers={"Origin": rig.origin})
            assert response.status_code == 400


@pytest.mark.asyncio
async def test_a_cross_origin_post_and_websocket_are_refused(rig: AwayRig) -> None:
    offer = rig.mode.pairings.offer(rig.origin)
    async with rig.http() as http:
        response = await http.post("/api/pair", json={
            "token": offer.token, "public_key": Phone().public_key, "name": "x"},
            headers={"Origin": "https://evil.test"})
        assert response.status_code == 403
        no_origin = await http.post("/api/pair", json={})
        assert no_origin.status_code == 403
    with pytest.raises(InvalidStatus) as refused:
        async with phone_socket(rig, Phone(), origin="https://evil.test"):
            pass
    assert refused.value.response.status_code == 403
    assert rig.mode.pairings.claim(offer.token, Phone().spki, "Pixel")  # still unclaimed


@pytest.mark.asyncio
async def test_another_host_name_is_421(rig: AwayRig) -> None:
    async with rig.http() as http:
        response = await http.get("/", headers={"Host": f"rebound.test:{rig.port}"})
        assert response.status_code == 421
        assert response.headers["x-content-type-options"] == "nosniff"
    with pytest.raises(InvalidStatus) as refused:
        async with phone_socket(rig, Phone(), host_header=f"rebound.test:{rig.port}"):
            pass
    assert refused.value.response.status_code == 421


@pytest.mark.asyncio
async def test_only_the_listed_paths_with_the_security_headers(rig: AwayRig) -> None:
    async with rig.http() as http:
        for path in ("/nothing", "/static/..%2Fserver.py", "/api/pair"):
            response = await http.get(path)
            assert response.status_code in (404, 405), path
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
            assert response.headers["cache-control"] == "no-store"
            assert response.headers["referrer-policy"] == "no-referrer"
            assert response.headers["cross-origin-opener-policy"] == "same-origin"
            assert response.headers["cross-origin-resource-policy"] == "same-origin"


@pytest.mark.asyncio
async def test_the_plain_helper_serves_only_the_certificate_and_its_steps(
        rig: AwayRig) -> None:
    import httpx

    base = f"http://{HOST}:{rig.port + 1}"
    async with httpx.AsyncClient(base_url=base) as http:
        certificate = await http.get("/desk-ca.crt")
        assert certificate.content == rig.authority.ca_pem
        page = await http.get("/")
        assert rig.authority.ca_fingerprint in page.text
        assert "Android" in page.text and "iPhone" in page.text
        assert "<script" not in page.text
        assert (await http.get("/ws")).status_code == 404
        assert (await http.post("/api/pair", json={})).status_code == 403
    assert rig.mode.status.ca_url == f"{base}/desk-ca.crt"


@pytest.mark.asyncio
async def test_an_oversized_message_closes_the_socket(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    call = rig.ask("npm test")
    async with phone_socket(rig, phone) as client:
        await client.sign_in()
        await client.connection.send("x" * (65 * 1024))
        assert await client.closed_with() == 1009
    assert still_waiting(rig, call)
    rig.broker.answer(rig.broker.approvals()[0].request_id, Decision.deny("done"))


def test_the_page_files_are_read_and_nothing_beside_them(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>page</title>")
    (tmp_path / "app.js").write_text("console.log(1)")
    (tmp_path / ".hidden").write_text("secret")
    files = PageFiles(tmp_path)
    assert files.read("index.html") == b"<!doctype html><title>page</title>"
    assert files.read("app.js") == b"console.log(1)"
    for name in (".hidden", "../index.html", "nothing.js", "a/b.js"):
        assert files.read(name) is None, name
    assert PageFiles(tmp_path / "missing").read("index.html") is None


@pytest.mark.asyncio
async def test_the_page_is_served_over_https(db: Database, tmp_path: Path) -> None:
    page = tmp_path / "page"
    page.mkdir()
    (page / "index.html").write_text("<!doctype html><title>page</title>")
    (page / "app.js").write_text("console.log(1)")
    async with away_rig(db, tmp_path, files=PageFiles(page)) as rig, rig.http() as http:
        index = await http.get("/")
        script = await http.get("/static/app.js")
        missing = await http.get("/static/nothing.css")
    assert index.status_code == 200 and index.text.startswith("<!doctype html>")
    assert index.headers["content-type"].startswith("text/html")
    assert script.headers["content-type"].startswith("text/javascript")
    assert missing.status_code == 404
    assert index.headers["x-content-type-options"] == "nosniff"


def test_the_listening_socket_sends_small_messages_at_once() -> None:
    sock = bind(HOST, 0)
    try:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        sock.close()
