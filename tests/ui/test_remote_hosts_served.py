"""Settings → Remote hosts and the running app's tunnels are one: a host added on the
page is served at once (its own socket on the desk, its ssh tunnel up, the host's socket
there), its card shows the live tunnel and which way in is in use, and removing it on
the page ends its tunnel and its socket. Real OpenSSH (`helpers.sshd`), the app's real
wiring, on the qasync loop."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_side import app_side
from helpers.loop import run, settle
from helpers.memory_keyring import MemoryKeyring
from helpers.remote_hosts_page import open_remote_hosts_page
from helpers.sshd import SshHost, remote_homes, ssh_host, ssh_server
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.remote.serving import RemoteHooks
from qoder_desktop.remote.tunnel_state import host_socket_path
from qoder_desktop.store.database import Database
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp

__all__ = ["remote_homes", "ssh_host", "ssh_server"]

SSH_TIMEOUT = 90.0


@pytest.fixture
def app(db: Database, memory_keyring: MemoryKeyring, qtbot: QtBot, tmp_path: Path,
        loop: AppEventLoop) -> Iterator[DesktopApp]:
    """The desktop app keeping its remote hosts (none yet), as it does after start-up."""
    _ledger, broker, hub = app_side(db)
    desktop = DesktopApp(broker, hub, SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,)),
                         Settings(), tmp_path / "settings.json")
    qtbot.addWidget(desktop.window)
    desktop.start_remote_hosts(RemoteHooks(broker, hub))
    yield desktop
    if desktop.settings_dialog is not None:
        desktop.settings_dialog.close()
    run(loop, desktop.remote_hosts.stop(), timeout=30)


def is_socket(path: Path) -> bool:
    """True when `path` is a Unix socket (not following a symlink)."""
    try:
        return stat.S_ISSOCK(path.lstat().st_mode)
    except OSError:
        return False


def test_a_host_added_on_the_page_is_served_and_removing_it_ends_its_tunnel(
        app: DesktopApp, ssh_host: SshHost, loop: AppEventLoop) -> None:
    alias = ssh_host.alias
    remote_socket = ssh_host.user.home / ".qoder-desktop" / "desk.sock"
    label = app.remote_hosts.label

    async def scenario() -> None:
        page = open_remote_hosts_page(app)
        await settle(page.empty_label.isVisible)
        dialog = page.open_add_dialog()
        dialog.destination_edit.setText(alias)
        dialog.config_edit.setText(str(ssh_host.config))
        dialog.add_button.click()
        await settle(lambda: alias in page.cards
                     and page.cards[alias].tunnel_label.text() == "connected",
                     timeout=SSH_TIMEOUT)
        card = page.cards[alias]
        assert card.in_use_label.text().startswith("In use: the app's tunnel")
        assert label.text() == f"{alias}: connected"  # the status bar says the same
        assert is_socket(host_socket_path(alias))
        await settle(lambda: is_socket(remote_socket), timeout=SSH_TIMEOUT)
        await settle(lambda: card.state_text().startswith("Ready"), timeout=SSH_TIMEOUT)
        assert card.tunnel_label.text() == "connected"  # the check kept the live state
        remote = app.remote_hosts.remote
        assert remote is not None
        tunnel = remote.tunnels[alias]

        card.remove_button.click()
        box = next(box for box in page.findChildren(QMessageBox, "confirmRemoveHost")
                   if box.isVisible())
        confirm = box.findChild(QPushButton, "confirmRemoveButton")
        assert confirm is not None
        confirm.click()
        await settle(lambda: not page.cards, timeout=SSH_TIMEOUT)
        assert tunnel.pid is None  # its ssh ended
        assert alias not in remote.servers
        assert not host_socket_path(alias).exists()
        assert label.text() == ""  # the status bar no longer lists it

    run(loop, scenario(), timeout=SSH_TIMEOUT * 2)
