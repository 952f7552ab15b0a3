"""The phone server's gate on its own: exact Host, exact Origin, headers on everything."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from qoder_desktop.away.http_guard import HostGuard, host_for_url

AUTHORITY = "192.168.1.20:8765"
ORIGIN = f"https://{AUTHORITY}"


async def hello(_request: Request) -> Response:
    return PlainTextResponse("hi", headers={"cache-control": "max-age=60"})


def client() -> httpx.AsyncClient:
    app = HostGuard(Starlette(routes=[Route("/", hello, methods=["GET", "POST"])]),
                    AUTHORITY, ORIGIN)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url=f"https://{AUTHORITY}")


@pytest.mark.asyncio
async def test_the_right_host_passes_with_the_headers_ours_winning() -> None:
    async with client() as http:
        response = await http.get("/")
    assert response.status_code == 200 and response.text == "hi"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.asyncio
@pytest.mark.parametrize("host", ["evil.test:8765", "192.168.1.20", "192.168.1.20:8766",
                                  "localhost:8765"])
async def test_any_other_host_is_421(host: str) -> None:
    async with client() as http:
        response = await http.get("/", headers={"Host": host})
    assert response.status_code == 421
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


@pytest.mark.asyncio
@pytest.mark.parametrize("origin", [None, "https://evil.test", "http://192.168.1.20:8765",
                                    "null"])
async def test_a_post_from_any_other_origin_is_403(origin: str | None) -> None:
    headers = {} if origin is None else {"Origin": origin}
    async with client() as http:
        refused = await http.post("/", headers=headers)
        allowed = await http.post("/", headers={"Origin": ORIGIN})
    assert refused.status_code == 403 and allowed.status_code == 200


def test_an_ipv6_literal_is_bracketed() -> None:
    assert host_for_url("fd00::1") == "[fd00::1]"
    assert host_for_url("192.168.1.20") == "192.168.1.20"
    assert host_for_url("Desk.LAN") == "desk.lan"
