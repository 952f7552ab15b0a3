"""A gateway whose HTTP server cannot start when the first agent connects tells the
person, as any gateway failure, and leaves no socket that accepts and hangs."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import sys
from pathlib import Path

import pytest
from helpers.app_side import app_side
from helpers.loop import settle
from helpers.memory_keyring import MemoryKeyring

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.gateway.contract import gateway_token
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.store.database import Database
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


def test_a_gateway_that_cannot_start_its_server_says_so_and_refuses_agents(
        db: Database, loop: AppEventLoop, memory_keyring: MemoryKeyring, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _ledger, broker, hub = app_side(db)
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    app = DesktopApp(broker, hub, store, Settings(), tmp_path / "settings.json")
    monkeypatch.setitem(sys.modules, "qoder_desktop.gateway.http_stack", None)  # a broken install

    async def scenario() -> tuple[bytes, int]:
        token = gateway_token(store)
        gateway = ApprovalGateway(broker, hub, token, port=0)
        app.start_gateway(gateway, token)
        await settle(lambda: "listening" in app.servers.gateway_status)
        reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)  # an agent
        try:
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try:
                reply = await asyncio.wait_for(reader.read(65536), 10)
            except ConnectionResetError:
                reply = b""
        finally:
            writer.close()
        await settle(lambda: not gateway.running)
        return reply, gateway.port

    try:
        reply, port = loop.run_until_complete(asyncio.wait_for(scenario(), 20))
        assert reply == b""  # reset at once, never left waiting
        status = app.window.statusBar().currentMessage()
        assert status.startswith("The approval gateway could not start when an agent connected")
        assert "ModuleNotFoundError" in status and "restart Qoder Desktop" in status
        assert app.servers.gateway_status == status  # the Connect dialog says the same
        with pytest.raises(ConnectionRefusedError):
            loop.run_until_complete(asyncio.open_connection("127.0.0.1", port))
        loop.run_until_complete(app.servers.stop())  # quitting after it is fine
    finally:
        app.dialogs.close_all()
        app.bridge.unsubscribe()
        app.tray.dispose()
        app.window.close()
        app.window.deleteLater()
