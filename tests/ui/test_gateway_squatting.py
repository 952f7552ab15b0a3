"""The person sees a squatted gateway port at once, and the leaked token is replaced."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.app_side import app_side
from helpers.loop import settle as settle_on_loop
from helpers.memory_keyring import MemoryKeyring
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from qoder_desktop.config.secrets import GATEWAY_TOKEN_ENV, SERVICE_NAME, SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.gateway.contract import GATEWAY_TOKEN_KEY, gateway_token
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.store.database import Database
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


async def settle(condition: Any) -> None:
    """`helpers.loop.settle` with room for the gateway to start (10 s)."""
    await settle_on_loop(condition, timeout=10.0)


def test_a_squatted_port_warns_loudly_and_replaces_the_token(
        db: Database, loop: AppEventLoop, memory_keyring: MemoryKeyring, tmp_path: Path) -> None:
    _ledger, broker, hub = app_side(db)
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    app = DesktopApp(broker, hub, store, Settings(), tmp_path / "settings.json")
    received = bytearray()

    async def squat(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.extend(await reader.read(65536))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        writer.close()

    async def scenario() -> str:
        squatter = await asyncio.start_server(squat, "127.0.0.1", 0)
        port = squatter.sockets[0].getsockname()[1]
        try:
            token = gateway_token(store)
            app.start_gateway(ApprovalGateway(broker, hub, token, port=port), token)
            await settle(lambda: app.servers.squat_warning is not None
                         and app.servers.squat_warning.isVisible())
        finally:
            squatter.close()
            await squatter.wait_closed()
        return token.reveal()

    try:
        old = loop.run_until_complete(asyncio.wait_for(scenario(), 20))
        box = app.servers.squat_warning
        assert isinstance(box, QMessageBox)
        assert box.textFormat() is Qt.TextFormat.PlainText
        assert "not Qoder Desktop" in box.text()
        assert "token in the OS keyring was replaced" in box.text()
        assert "not Qoder Desktop" in app.servers.gateway_status
        assert "not Qoder Desktop" in app.window.statusBar().currentMessage()
        new = memory_keyring.get_password(SERVICE_NAME, GATEWAY_TOKEN_KEY)
        assert new and new != old
        assert app.gateway_token is not None and app.gateway_token.reveal() == new
        assert old.encode() not in bytes(received)
        assert app.servers.gateway is not None and not app.servers.gateway.running
    finally:
        if app.servers.squat_warning is not None:
            app.servers.squat_warning.close()
        app.dialogs.close_all()
        app.bridge.unsubscribe()
        app.tray.dispose()
        app.window.close()
        app.window.deleteLater()


def test_without_a_keyring_the_warning_says_what_the_person_must_do(
        db: Database, loop: AppEventLoop, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The token from QODER_DESKTOP_GATEWAY_TOKEN cannot be replaced by the app: the
    warning must not say it was, must say what to do, and this run stops accepting it."""
    from keyring.backends import fail

    env_token = "env-token-the-squatter-may-hold-0123456789"
    monkeypatch.setenv(GATEWAY_TOKEN_ENV, env_token)
    _ledger, broker, hub = app_side(db)
    store = SecretStore(fail.Keyring())
    app = DesktopApp(broker, hub, store, Settings(), tmp_path / "settings.json")

    async def squat(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        writer.close()

    async def scenario() -> int:
        squatter = await asyncio.start_server(squat, "127.0.0.1", 0)
        port = squatter.sockets[0].getsockname()[1]
        try:
            token = gateway_token(store)
            assert token.reveal() == env_token
            app.start_gateway(ApprovalGateway(broker, hub, token, port=port), token)
            await settle(lambda: app.servers.squat_warning is not None
                         and app.servers.squat_warning.isVisible())
        finally:
            squatter.close()
            await squatter.wait_closed()
        # Another port, this run's token: the one the squatter may hold gets nothing.
        assert app.gateway_token is not None
        async with ApprovalGateway(broker, hub, app.gateway_token, port=0) as moved, \
                httpx.AsyncClient() as http:
            response = await http.post(moved.url, json={}, headers={
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {env_token}"})
        return response.status_code

    try:
        status = loop.run_until_complete(asyncio.wait_for(scenario(), 20))
        box = app.servers.squat_warning
        assert isinstance(box, QMessageBox)
        text = " ".join(box.text().split())
        assert "was replaced" not in text and "worthless" not in text
        assert f"Set {GATEWAY_TOKEN_ENV} to a new secret value" in text
        assert "restart Qoder Desktop" in text and "set up your agents again" in text
        assert app.gateway_token is not None and app.gateway_token.reveal() != env_token
        assert status == 401
    finally:
        if app.servers.squat_warning is not None:
            app.servers.squat_warning.close()
        app.dialogs.close_all()
        app.bridge.unsubscribe()
        app.tray.dispose()
        app.window.close()
        app.window.deleteLater()
