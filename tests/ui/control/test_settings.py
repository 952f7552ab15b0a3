"""The settings controller through the app's wiring: one settings dialog at a time, what
the person saves is in force and in the file, secrets go to (and out of) the keyring,
never into the settings file. The in-memory keyring the tests use, offscreen."""

from __future__ import annotations

from pathlib import Path

from helpers.loop import run, settle
from helpers.memory_keyring import MemoryKeyring
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from qoder_desktop.config.secrets import SERVICE_NAME, SecretName, SecretStore
from qoder_desktop.config.settings import load_settings
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.windows.settings_dialog import NOT_SET_TEXT, STORED_TEXT, SettingsDialog
from qoder_desktop.ui.wiring import DesktopApp

KEY = "sk-ant-typed-in-the-settings-dialog-0123"


def _save(dialog: SettingsDialog, qtbot: QtBot) -> None:
    button = dialog.ui.buttonBox.button(QDialogButtonBox.StandardButton.Save)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _with_keyring(desktop: DesktopApp, keyring: MemoryKeyring) -> None:
    """The app's secrets in the test's in-memory keyring (trusted for the test)."""
    desktop.settings_control.secrets = SecretStore(keyring, extra_allowed=(MemoryKeyring,))


def _open(desktop: DesktopApp, loop: AppEventLoop) -> SettingsDialog:
    """Open the settings dialog and wait until it knows what the keyring holds."""
    desktop.open_settings()
    dialog = desktop.settings_dialog
    assert dialog is not None
    run(loop, settle(lambda: all(dialog.secret_status(name) in (STORED_TEXT, NOT_SET_TEXT)
                                 for name in SecretName)))
    return dialog


def test_one_settings_dialog_at_a_time(desktop: DesktopApp, loop: AppEventLoop,
                                       memory_keyring: MemoryKeyring) -> None:
    _with_keyring(desktop, memory_keyring)
    first = _open(desktop, loop)
    desktop.open_settings()  # raised, not a second one
    assert desktop.settings_dialog is first
    first.reject()
    run(loop, settle(lambda: desktop.settings_dialog is None))
    second = _open(desktop, loop)
    assert second is not first
    second.reject()


def test_saved_settings_are_in_force_and_in_the_file(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot, tmp_path: Path,
        memory_keyring: MemoryKeyring) -> None:
    _with_keyring(desktop, memory_keyring)
    dialog = _open(desktop, loop)
    dialog.ui.portSpin.setValue(48555)
    _save(dialog, qtbot)
    run(loop, settle(lambda: desktop.settings_dialog is None))
    assert desktop.current_settings.value.gateway_port == 48555
    assert load_settings(tmp_path / "settings.json").settings.gateway_port == 48555
    assert desktop.window.statusBar().currentMessage() == "Settings saved."


def test_a_typed_secret_goes_to_the_keyring_never_to_the_settings_file(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot, tmp_path: Path,
        memory_keyring: MemoryKeyring) -> None:
    _with_keyring(desktop, memory_keyring)
    dialog = _open(desktop, loop)
    assert dialog.secret_status(SecretName.ANTHROPIC_API_KEY) == NOT_SET_TEXT
    qtbot.keyClicks(dialog.ui.anthropicKeyEdit, KEY)
    _save(dialog, qtbot)
    run(loop, settle(lambda: "saved in the keyring" in desktop.window.statusBar().currentMessage()))
    assert memory_keyring.get_password(SERVICE_NAME, SecretName.ANTHROPIC_API_KEY.value) == KEY
    assert KEY not in (tmp_path / "settings.json").read_text(encoding="utf-8")


def test_a_removed_secret_leaves_the_keyring(
        desktop: DesktopApp, loop: AppEventLoop, qtbot: QtBot,
        memory_keyring: MemoryKeyring) -> None:
    """The person pressed Remove on a stored key and saved: the key is gone, and the
    dialog opened next says it is not set."""
    memory_keyring.set_password(SERVICE_NAME, SecretName.ANTHROPIC_API_KEY.value, KEY)
    _with_keyring(desktop, memory_keyring)
    dialog = _open(desktop, loop)
    assert dialog.secret_status(SecretName.ANTHROPIC_API_KEY) == STORED_TEXT
    dialog.ui.tabs.setCurrentWidget(dialog.ui.accountsTab)
    qtbot.mouseClick(dialog.ui.anthropicKeyRemoveButton, Qt.MouseButton.LeftButton)
    _save(dialog, qtbot)
    run(loop, settle(lambda: memory_keyring.get_password(
        SERVICE_NAME, SecretName.ANTHROPIC_API_KEY.value) is None))
    run(loop, settle(lambda: desktop.settings_dialog is None))
    again = _open(desktop, loop)
    assert again.secret_status(SecretName.ANTHROPIC_API_KEY) == NOT_SET_TEXT
    again.reject()
