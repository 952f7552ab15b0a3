"""The gateway's token, its binding to loopback, and the snippets agents are given
(a real MCP client, a real broker, as in `test_gateway`)."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import httpx
import pytest
from helpers.app_side import app_side
from helpers.gateway_rig import (
    BASH,
    TOKEN,
    Fixture,
    mcp_client,
)
from helpers.memory_keyring import MemoryKeyring
from keyring.backends import fail

from qoder_desktop.config.secrets import SERVICE_NAME, RedactSecrets, SecretStore
from qoder_desktop.gateway.contract import (
    GATEWAY_TOKEN_ENV,
    GATEWAY_TOKEN_KEY,
    TOKEN_PLACEHOLDER,
    client_snippets,
    gateway_token,
)
from qoder_desktop.gateway.server import ApprovalGateway, GatewayPortInUse
from qoder_desktop.store.database import Database

# -- the token ------------------------------------------------------------------------------


def _initialize_body() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "intruder", "version": "0"}}}


@pytest.mark.parametrize("header", [None, "Bearer wrong-token", f"Basic {TOKEN}", "Bearer",
                                    f"Bearer {TOKEN}x"])
@pytest.mark.asyncio
async def test_requests_without_the_token_are_refused_and_logged(
        gw: Fixture, header: str | None, caplog: pytest.LogCaptureFixture) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if header is not None:
        headers["Authorization"] = header
    caplog.set_level(logging.WARNING, logger="qoder_desktop.gateway.server")
    async with httpx.AsyncClient() as http:
        response = await http.post(gw.gateway.url, json=_initialize_body(), headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert gw.gateway.refused == 1
    [record] = [r for r in caplog.records if "refused" in r.getMessage()]
    assert "127.0.0.1:" in record.getMessage()
    assert "wrong-token" not in caplog.text and TOKEN not in caplog.text


@pytest.mark.asyncio
async def test_an_mcp_client_with_a_wrong_token_gets_nothing(gw: Fixture) -> None:
    with pytest.raises(Exception) as caught:  # anyio wraps the HTTP error in a group
        async with mcp_client(gw.gateway.url, token="wrong") as session:
            await session.call_tool("approve", BASH)
    assert "401" in repr(caught.value) or "Unauthorized" in repr(caught.value)
    assert gw.added.empty() and gw.gateway.refused >= 1


@pytest.mark.asyncio
async def test_the_token_is_read_on_every_request(db: Database) -> None:
    _ledger, broker, hub = app_side(db)
    current = ["first-token-1234"]
    async with ApprovalGateway(broker, hub, lambda: current[0], port=0) as gateway, \
            httpx.AsyncClient() as http:
        headers = {"Accept": "application/json, text/event-stream",
                   "Authorization": "Bearer first-token-1234"}
        first = await http.post(gateway.url, json=_initialize_body(), headers=headers)
        current[0] = "second-token-5678"
        second = await http.post(gateway.url, json=_initialize_body(), headers=headers)
    assert first.status_code == 200 and second.status_code == 401


@pytest.mark.asyncio
async def test_a_foreign_host_header_is_refused(gw: Fixture) -> None:
    headers = {"Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"}
    async with httpx.AsyncClient() as http:
        response = await http.post(gw.gateway.url, json=_initialize_body(), headers=headers)
    assert response.status_code == 421


# -- binding ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_taken_port_gives_a_clear_error(db: Database) -> None:
    _ledger, broker, hub = app_side(db)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        gateway = ApprovalGateway(broker, hub, TOKEN, port=port)
        # A plain listener cannot prove it is a gateway with our token: a squatter
        # (tests/gateway/test_port_squatting.py has the rest).
        with pytest.raises(GatewayPortInUse, match=f"127.0.0.1:{port}, .*another gateway port"):
            await gateway.start()
    assert not gateway.running


def test_only_loopback_is_served(db: Database) -> None:
    _ledger, broker, hub = app_side(db)
    for host in ("0.0.0.0", "::", "192.168.1.2", "localhost"):
        with pytest.raises(ValueError, match=r"127\.0\.0\.1"):
            ApprovalGateway(broker, hub, TOKEN, host=host)
    gateway = ApprovalGateway(broker, hub, TOKEN, port=9123)
    assert gateway.url == "http://127.0.0.1:9123/mcp" and gateway.port == 9123


# -- token storage and snippets -----------------------------------------------------------------


def test_the_token_is_created_once_in_the_keyring(memory_keyring: MemoryKeyring) -> None:
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    redactor = RedactSecrets()
    first = gateway_token(store, redactor=redactor)
    assert first.persistent and len(first.reveal()) >= 40
    assert memory_keyring.passwords[(SERVICE_NAME, GATEWAY_TOKEN_KEY)] == first.reveal()
    assert gateway_token(store).reveal() == first.reveal()
    assert redactor.redact(f"token {first.reveal()}") == "token ********"
    assert first.reveal() not in repr(first)
    replaced = gateway_token(store, replace=True)
    assert replaced.persistent and replaced.reveal() != first.reveal()


def test_without_a_keyring_the_token_lives_in_memory_for_this_run() -> None:
    store = SecretStore(fail.Keyring())
    first = gateway_token(store, environ={})
    second = gateway_token(store, environ={})
    assert not first.persistent and first.reveal() != second.reveal()
    assert "in memory for this run only" in first.message
    from_env = gateway_token(store, environ={GATEWAY_TOKEN_ENV: "env-token-value"})
    assert from_env.reveal() == "env-token-value" and GATEWAY_TOKEN_ENV in from_env.message


def test_a_keyring_that_loses_the_token_is_not_trusted() -> None:
    class Dropping(MemoryKeyring):
        def set_password(self, service: str, username: str, password: str) -> None:
            return None

    token = gateway_token(SecretStore(Dropping(), extra_allowed=(MemoryKeyring,)), environ={})
    assert not token.persistent and "did not keep" in token.message


def test_snippets_show_a_placeholder_unless_the_token_is_asked_for() -> None:
    url = "http://127.0.0.1:8765/mcp"
    shown = client_snippets(url)
    assert TOKEN not in "".join(shown.values())
    assert shown["claude_flags"] == ("--mcp-config qoder-desktop.json "
                                     "--permission-prompt-tool mcp__qoder-desktop__approve")
    assert shown["qodercli_flags"] == shown["claude_flags"]
    config = json.loads(shown["claude_mcp_config"])
    assert config == {"mcpServers": {"qoder-desktop": {
        "type": "http", "url": url,
        "headers": {"Authorization": f"Bearer {TOKEN_PLACEHOLDER}"}}}}
    assert json.loads(shown["qodercli_mcp_config"]) == config
    copied = client_snippets(url, TOKEN)
    assert json.loads(copied["claude_mcp_config"])["mcpServers"]["qoder-desktop"]["headers"] == {
        "Authorization": f"Bearer {TOKEN}"}
    assert copied["claude_command"].startswith("claude -p ")
    assert copied["qodercli_command"].startswith("qodercli -p ")
    assert 'permission_prompt_tool_name="mcp__qoder-desktop__approve"' in copied["qoder_sdk"]
