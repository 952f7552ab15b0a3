"""Settings → Remote hosts against a real OpenSSH server (`helpers.sshd`): a host added
through the page is listed with its python3 and the hook installed, its RemoteForward
line is one ssh accepts, it can be removed again, and an unreachable host says why.

The page's controller runs on the app's qasync loop, its ssh runs off the GUI thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from accessibility_walk import problems
from helpers.app_side import app_side
from helpers.loop import LoopTicks, run, settle
from helpers.memory_keyring import MemoryKeyring
from helpers.remote_hosts_page import open_remote_hosts_page
from helpers.sshd import SshHost, remote_homes, ssh_host, ssh_reads, ssh_server
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.remote.commands import remote_main
from qoder_desktop.remote.hook_file import hook_version
from qoder_desktop.remote.hosts import HostRegistry, RemoteHost
from qoder_desktop.remote.overview import host_socket_path, remembered_hook
from qoder_desktop.remote.tunnel_state import NOT_RUNNING
from qoder_desktop.store.database import Database
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.windows.remote_hosts_page import (
    CHECKING_TEXT,
    HostCard,
    HostRow,
    RemoteHostsPage,
)
from qoder_desktop.ui.wiring import DesktopApp

__all__ = ["remote_homes", "ssh_host", "ssh_server"]

SSH_TIMEOUT = 90.0
"""Seconds a scenario with a few ssh runs may take on a loaded machine."""


@pytest.fixture
def app(db: Database, memory_keyring: MemoryKeyring, qtbot: QtBot, tmp_path: Path
        ) -> Iterator[DesktopApp]:
    """The desktop app with an in-memory keyring (a host's token goes there)."""
    _ledger, broker, hub = app_side(db)
    desktop = DesktopApp(broker, hub, SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,)),
                         Settings(), tmp_path / "settings.json")
    qtbot.addWidget(desktop.window)
    yield desktop
    if desktop.settings_dialog is not None:
        desktop.settings_dialog.close()


def click(button: QPushButton) -> None:
    """Press `button` with the mouse."""
    assert button.isEnabled()
    button.click()


def open_box(page: RemoteHostsPage) -> QMessageBox | None:
    """The page's open confirmation box, if one is open."""
    return next((box for box in page.findChildren(QMessageBox, "confirmRemoveHost")
                 if box.isVisible()), None)


def confirm_box(page: RemoteHostsPage) -> QMessageBox:
    """The page's open confirmation box."""
    box = open_box(page)
    assert box is not None
    return box


def test_add_a_host_on_the_page_see_it_ready_then_remove_it(
        app: DesktopApp, ssh_host: SshHost, loop: AppEventLoop) -> None:
    home = ssh_host.user.home
    steps: list[str] = []
    turns: list[int] = []  # loop turns counted when each step was shown

    async def scenario() -> None:
        page = open_remote_hosts_page(app)
        await settle(page.empty_label.isVisible)
        dialog = page.open_add_dialog()
        dialog.destination_edit.setText(ssh_host.alias)
        dialog.config_edit.setText(str(ssh_host.config))
        async with LoopTicks() as ticks:
            shown = page.set_add_progress
            page.set_add_progress = lambda step: (  # type: ignore[method-assign]
                steps.append(step), turns.append(ticks.count), shown(step))
            click(dialog.add_button)
            assert not dialog.add_button.isEnabled()  # one add at a time

            await settle(lambda: ssh_host.alias in page.cards
                         and page.cards[ssh_host.alias].state_text().startswith("Ready"),
                         timeout=SSH_TIMEOUT)
        assert page.add_dialog is None  # closed once the host was added
        card = page.cards[ssh_host.alias]
        assert card.reachable_label.text() == "yes"
        assert card.python_label.text().startswith("3.")
        assert card.hook_label.text() == (f"installed, version {hook_version()} "
                                          "(Claude Code, Qoder CLI)")
        assert card.tunnel_label.text() == NOT_RUNNING
        assert card.in_use_label.text().startswith("In use: neither yet")
        assert ssh_reads(card.forward_edit.text()) == (
            f"remoteforward {home}/.qoder-desktop/desk.sock "
            f"{host_socket_path(ssh_host.alias)}")
        click(card.copy_button)
        assert QGuiApplication.clipboard().text() == card.forward_edit.text()
        assert (home / ".qoder-desktop" / "qoder-desktop-hook.py").is_file()

        (home / ".qoder-desktop" / "qoder-desktop-hook.py").unlink()  # taken off by hand
        click(card.check_button)
        assert card.state_text() == CHECKING_TEXT
        await settle(lambda: card.state_text() == "Needs attention", timeout=SSH_TIMEOUT)
        assert card.hook_label.text().startswith("not installed")
        assert card.hook_label.text().endswith("add the host again")

        click(card.remove_button)
        box = confirm_box(page)
        assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
        confirm = box.findChild(QPushButton, "confirmRemoveButton")
        assert confirm is not None
        confirm.click()
        await settle(lambda: not page.cards and page.empty_label.isVisible(),
                     timeout=SSH_TIMEOUT)
        assert "removed from this desk's remote hosts" in page.notice_label.text()

    run(loop, scenario(), timeout=SSH_TIMEOUT * 2)
    assert steps[0] == f"Checking {ssh_host.alias}…"
    assert steps[1].startswith(f"Deploying the hook to {ssh_host.alias}")
    assert turns[1] > turns[0]  # the loop kept turning while ssh checked the host
    assert not (home / ".qoder-desktop").exists()
    assert HostRegistry.default().hosts() == []


def test_a_host_that_refuses_says_why_and_can_be_forgotten_here(
        app: DesktopApp, ssh_host: SshHost, loop: AppEventLoop,
        memory_keyring: MemoryKeyring) -> None:
    store = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    assert remote_main(["add", ssh_host.alias, "--ssh-config", str(ssh_host.config)],
                       store=store) == 0
    ssh_host.server.stop()

    async def scenario() -> None:
        page = open_remote_hosts_page(app)
        await settle(lambda: ssh_host.alias in page.cards
                     and page.cards[ssh_host.alias].state_text() == "Not reachable",
                     timeout=SSH_TIMEOUT)
        card: HostCard = page.cards[ssh_host.alias]
        assert card.reachable_label.text().startswith("no — ")
        assert "Connection refused" in card.reachable_label.text()

        click(card.remove_button)
        confirm_box(page).findChild(QPushButton, "confirmRemoveButton").click()
        await settle(lambda: (box := open_box(page)) is not None
                     and box.text().startswith("Forget"),
                     timeout=SSH_TIMEOUT)
        box = confirm_box(page)
        assert "Connection refused" in box.informativeText()
        assert "Connection refused" in card.state_text()
        assert "choose Forget" in card.state_text()
        box.findChild(QPushButton, "confirmRemoveButton").click()
        await settle(lambda: not page.cards, timeout=SSH_TIMEOUT)
        assert "forgotten here" in page.notice_label.text()

    run(loop, scenario(), timeout=SSH_TIMEOUT * 2)
    assert HostRegistry.default().hosts() == []


def test_an_add_that_fails_says_why_in_the_dialog(
        app: DesktopApp, ssh_host: SshHost, loop: AppEventLoop) -> None:
    async def scenario() -> None:
        page = open_remote_hosts_page(app)
        await settle(page.empty_label.isVisible)
        dialog = page.open_add_dialog()
        dialog.destination_edit.setText(ssh_host.closed_alias)
        dialog.config_edit.setText(str(ssh_host.config))
        click(dialog.add_button)
        await settle(dialog.error_label.isVisible, timeout=SSH_TIMEOUT)
        assert dialog.isVisible()  # still open: fix and try again
        assert "Connection refused" in dialog.error_label.text()
        assert dialog.add_button.isEnabled()
        assert dialog.error_label.textFormat() == Qt.TextFormat.PlainText
        assert not page.cards

    run(loop, scenario(), timeout=SSH_TIMEOUT * 2)
    assert HostRegistry.default().hosts() == []


def test_a_listed_host_is_plain_text_and_every_control_is_named(qtbot: QtBot) -> None:
    page = RemoteHostsPage()
    qtbot.addWidget(page)
    page.show()
    host = RemoteHost("<b>box</b>", home="/home/me", python="/usr/bin/python3",
                      hook_version="1", agents=["claude"], added="2026-01-01T00:00:00+00:00")

    page.show_hosts([HostRow(host.name, host.python, remembered_hook(host),
                             "RemoteForward a b", "In use: neither yet."),
                     HostRow("me@pi", "", "", "RemoteForward c d", "In use: neither yet.")])

    card = page.cards[host.name]
    assert card.title() == "<b>box</b>"
    assert card.hook_label.text() == "version 1 for Claude Code, added 2026-01-01"
    assert card.python_label.text() == "/usr/bin/python3"
    assert card.state_text() == CHECKING_TEXT
    assert not card.check_button.isEnabled()  # one check at a time
    assert card.forward_edit.text() == "RemoteForward a b"
    assert not page.empty_label.isVisible()
    for card in page.cards.values():
        card.set_idle()
    assert problems(page) == []


def test_a_broken_host_list_is_named_and_left_alone(app: DesktopApp, loop: AppEventLoop
                                                    ) -> None:
    registry = HostRegistry.default()
    registry.path.parent.mkdir(parents=True, exist_ok=True)
    registry.path.write_text("{not json", encoding="utf-8")

    async def scenario() -> None:
        page = open_remote_hosts_page(app)
        await settle(page.notice_label.isVisible)
        assert str(registry.path) in page.notice_label.text()
        assert "left untouched" in page.notice_label.text()
        assert not page.empty_label.isVisible()  # not read, so not said to be empty

    run(loop, scenario())
    assert registry.path.read_text(encoding="utf-8") == "{not json"
