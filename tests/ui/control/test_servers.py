"""The servers controller as the person meets it: installing the terminal hook from the
settings dialog (in the test's own HOME), a settings file it must not touch, and the
"Connect an Agent" dialog. The whole desktop wiring, offscreen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.loop import run, settle
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.windows.settings_dialog import SettingsDialog
from qoder_desktop.ui.wiring import DesktopApp


@pytest.fixture
def claude_settings(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's user settings file in the test's HOME."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return isolated_home / ".claude" / "settings.json"


def _settings(desktop: DesktopApp, loop: AppEventLoop) -> SettingsDialog:
    desktop.open_settings()
    dialog = desktop.settings_dialog
    assert dialog is not None
    run(loop, settle(lambda: dialog.hook_status("claude") != "Checking…"))
    return dialog


def _press(dialog: SettingsDialog, qtbot: QtBot, name: str) -> None:
    button = dialog.findChild(QPushButton, name)
    assert button is not None and button.isEnabled(), name
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _our_hooks(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [hook["command"] for entry in data.get("hooks", {}).get("PermissionRequest", [])
            for hook in entry.get("hooks", []) if "qoder_desktop" in hook.get("command", "")]


def test_the_terminal_hook_is_installed_and_removed_from_the_settings_dialog(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot, claude_settings: Path) -> None:
    dialog = _settings(desktop, loop)
    assert dialog.hook_status("claude").startswith("Claude Code: not installed")
    _press(dialog, qtbot, "claudeHookInstall")
    run(loop, settle(lambda: dialog.hook_status("claude").startswith(
        "Claude Code: installed (")))
    assert desktop.window.statusBar().currentMessage() == (
        "Claude Code: the terminal hook is installed.")
    [command] = _our_hooks(claude_settings)
    assert "permission-request --agent claude" in command

    _press(dialog, qtbot, "claudeHookUninstall")
    run(loop, settle(lambda: dialog.hook_status("claude").startswith(
        "Claude Code: not installed")))
    assert desktop.window.statusBar().currentMessage() == (
        "Claude Code: the terminal hook is removed.")
    assert _our_hooks(claude_settings) == []
    dialog.reject()


def test_a_settings_file_that_is_not_json_is_left_untouched_and_the_person_told_why(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot, claude_settings: Path) -> None:
    claude_settings.parent.mkdir(parents=True)
    claude_settings.write_text("{ not json", encoding="utf-8")
    dialog = _settings(desktop, loop)
    _press(dialog, qtbot, "claudeHookInstall")
    run(loop, settle(lambda: desktop.window.statusBar().currentMessage().startswith(
        "Claude Code: ") and "installed." not in desktop.window.statusBar().currentMessage()))
    message = desktop.window.statusBar().currentMessage().removeprefix("Claude Code: ")
    assert dialog.hook_status("claude") == message  # the row says the same, as a warning
    assert message.startswith(f"{claude_settings} is not valid JSON")
    assert message.endswith("it was left untouched. Fix it, then try again.")
    assert claude_settings.read_text(encoding="utf-8") == "{ not json"
    dialog.reject()


def test_the_connect_dialog_opens_once_and_says_the_gateway_is_not_running(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    desktop.servers.open_connect_dialog()
    dialog = desktop.servers.connect_dialog
    assert dialog is not None and dialog.isVisible()
    desktop.servers.open_connect_dialog()  # raised, not a second one
    assert desktop.servers.connect_dialog is dialog
    status = dialog.findChild(QLabel, "gatewayStatus")
    assert status is not None and status.text() == "The approval gateway is not running."
    # The snippets point at the port in the settings (where the gateway will listen).
    port = desktop.current_settings.value.gateway_port
    snippets = " ".join(view.toPlainText() for view in dialog.snippet_views.values())
    assert f"127.0.0.1:{port}/mcp" in snippets
    dialog.reject()
    run(loop, settle(lambda: desktop.servers.connect_dialog is None))


def test_the_connect_dialog_reads_the_gateways_token_first_when_no_agent_has_yet(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    """The token is read when first needed: opening the dialog reads it (off the loop),
    then the dialog shows and its Copy carries it; a keyring that fails still opens the
    dialog, with the placeholder, and says why."""
    from qoder_desktop.config.secrets import SecretValue
    from qoder_desktop.gateway.contract import TOKEN_PLACEHOLDER, GatewayToken, LazyGatewayToken

    reads: list[str] = []

    def load() -> GatewayToken:
        reads.append("read")
        return GatewayToken(SecretValue("tok-read-when-needed-0123456789"), True, "In the keyring.")

    desktop.servers._token = LazyGatewayToken(load)
    desktop.servers.open_connect_dialog()
    run(loop, settle(lambda: desktop.servers.connect_dialog is not None))
    dialog = desktop.servers.connect_dialog
    assert dialog is not None and dialog.isVisible() and reads == ["read"]
    assert "tok-read-when-needed-0123456789" in dialog.copy("claude_mcp_config")
    assert all("tok-read-when-needed" not in view.toPlainText()  # shown: the placeholder
               for view in dialog.snippet_views.values())
    dialog.reject()
    run(loop, settle(lambda: desktop.servers.connect_dialog is None))

    def broken() -> GatewayToken:
        raise RuntimeError("the keyring is locked")

    desktop.servers._token = LazyGatewayToken(broken)
    desktop.servers.open_connect_dialog()
    run(loop, settle(lambda: desktop.servers.connect_dialog is not None))
    dialog = desktop.servers.connect_dialog
    assert dialog is not None and TOKEN_PLACEHOLDER in dialog.copy("claude_mcp_config")
    assert desktop.window.statusBar().currentMessage() == (
        "The approval gateway's token could not be read: the keyring is locked")
    dialog.reject()
    run(loop, settle(lambda: desktop.servers.connect_dialog is None))
