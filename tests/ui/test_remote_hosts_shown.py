"""The remote hosts' tunnels in the main window and the tray: a host that cannot be
reached shows as reconnecting with ssh's reason; quitting ends its ssh."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import shutil
import socket
from pathlib import Path

import pytest
from helpers.app_side import app_side
from helpers.loop import settle
from helpers.memory_keyring import MemoryKeyring

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.remote.hosts import HostRegistry, RemoteHost, ensure_host_token
from qoder_desktop.remote.serving import RemoteHooks
from qoder_desktop.remote.tunnel import Tunnel, TunnelState
from qoder_desktop.store.database import Database
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.windows.history_detail import entry_text
from qoder_desktop.ui.wiring import DesktopApp

pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="needs OpenSSH's ssh")
ALIAS = "closed-box"
UNREACHABLE = f"{ALIAS}: reconnecting — host unreachable (connection refused)"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _closed_host(tmp_path: Path) -> Path:
    """An ssh_config whose alias is a loopback port nothing listens on."""
    config = tmp_path / "ssh_config"
    config.write_text(f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {_closed_port()}\n"
                      f"  UserKnownHostsFile {tmp_path / 'known_hosts'}\n", encoding="utf-8")
    return config


def test_an_unreachable_host_shows_reconnecting_in_the_window_and_tray(
        db: Database, loop: AppEventLoop, memory_keyring: MemoryKeyring, app_paths: object,
        tmp_path: Path) -> None:
    del app_paths
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    HostRegistry.default().put(RemoteHost(ALIAS, ssh_config=str(_closed_host(tmp_path)),
                                          home="/home/someone"))
    ensure_host_token(store, ALIAS)
    _ledger, broker, hub = app_side(db)
    app = DesktopApp(broker, hub, store, Settings(), tmp_path / "settings.json")
    app.window.show()
    label = app.remote_hosts.label

    async def scenario() -> Tunnel:
        app.start_remote_hosts(RemoteHooks(broker, hub))
        await settle(lambda: label.text() == UNREACHABLE, timeout=20)
        remote = app.remote_hosts.remote
        assert remote is not None
        return remote.tunnels[ALIAS]

    try:
        tunnel = loop.run_until_complete(asyncio.wait_for(scenario(), 30))
        assert label.isVisible()
        assert "RemoteForward /home/someone/.qoder-desktop/desk.sock " in label.toolTip()
        assert UNREACHABLE in app.tray.tooltip()
        assert any(action.text() == UNREACHABLE for action in app.tray.menu().actions())
        loop.run_until_complete(asyncio.wait_for(app.remote_hosts.stop(), 30))
        assert tunnel.pid is None
        assert tunnel.status.state is TunnelState.STOPPED
    finally:
        app.dialogs.close_all()
        app.bridge.unsubscribe()
        app.tray.dispose()
        app.window.close()
        app.window.deleteLater()


def test_a_host_added_and_removed_while_the_app_runs_is_followed(
        db: Database, loop: AppEventLoop, memory_keyring: MemoryKeyring, app_paths: object,
        tmp_path: Path) -> None:
    del app_paths
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    _ledger, broker, hub = app_side(db)
    app = DesktopApp(broker, hub, store, Settings(), tmp_path / "settings.json")
    app.window.show()
    label = app.remote_hosts.label
    registry = HostRegistry.default()

    async def scenario() -> Tunnel:
        app.start_remote_hosts(RemoteHooks(broker, hub))
        remote = app.remote_hosts.remote
        assert remote is not None
        ensure_host_token(store, ALIAS)  # as `remote add` does: the token, then the list
        registry.put(RemoteHost(ALIAS, ssh_config=str(_closed_host(tmp_path)),
                                home="/home/someone"))
        await settle(lambda: label.text() == UNREACHABLE, timeout=20)
        tunnel = remote.tunnels[ALIAS]
        registry.remove(ALIAS)
        await settle(lambda: not label.isVisible() and ALIAS not in remote.tunnels,
                     timeout=20)
        return tunnel

    try:
        tunnel = loop.run_until_complete(asyncio.wait_for(scenario(), 40))
        assert tunnel.status.state is TunnelState.STOPPED and tunnel.pid is None
        assert UNREACHABLE not in app.tray.tooltip()
        loop.run_until_complete(asyncio.wait_for(app.remote_hosts.stop(), 30))
    finally:
        app.dialogs.close_all()
        app.bridge.unsubscribe()
        app.tray.dispose()
        app.window.close()
        app.window.deleteLater()


def test_the_history_shows_a_remote_requests_host() -> None:
    entry = {"tool_name": "Bash", "session_name": "box · Claude Code · api",
             "session_id": "s-1", "entry_id": "r-1", "host": "box"}

    assert entry_text(entry).splitlines()[1:3] == [
        "Session: box · Claude Code · api (s-1)", "Host: box"]
    assert "Host:" not in entry_text({**entry, "host": None})
