"""The settings dialog: edits a copy of Settings; secrets leave only as signals."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QLineEdit

from qoder_desktop.config.secrets import KeyringStatus, SecretName
from qoder_desktop.config.settings import NotificationSettings, Settings
from qoder_desktop.domain.models import Backend, PermissionMode
from qoder_desktop.ui.widgets import pickers
from qoder_desktop.ui.windows.settings_dialog import NOT_SET_TEXT, STORED_TEXT, SettingsDialog

USABLE = KeyringStatus(True, "keyring.backends.SecretService.Keyring",
                       "Secrets are kept in the OS keyring (SecretService).")
UNUSABLE = KeyringStatus(False, "keyring.backends.fail.Keyring",
                         "No usable OS keyring was found.")


def open_dialog(qtbot, settings: Settings | None = None, **kw: object) -> SettingsDialog:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(settings or Settings(), **kw)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    return dialog


def save(dialog: SettingsDialog, qtbot) -> None:  # type: ignore[no-untyped-def]
    button = dialog.ui.buttonBox.button(QDialogButtonBox.StandardButton.Save)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_loads_and_saves_every_setting(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    original = Settings(default_model="opus", default_allowed_tools=["Read"],
                        trusted_workspaces=[str(tmp_path / "old")])
    dialog = open_dialog(qtbot, original, keyring_status=USABLE)
    ui = dialog.ui
    assert ui.modelEdit.text() == "opus"
    assert ui.allowedEdit.text() == "Read"
    assert ui.workspacesList.count() == 1
    dangerous = [ui.modeCombo.itemData(i) for i in range(ui.modeCombo.count())]
    assert PermissionMode.BYPASS.value not in dangerous
    assert PermissionMode.YOLO.value not in dangerous

    ui.backendCombo.setFocus()
    qtbot.keyClick(ui.backendCombo, Qt.Key.Key_Down)
    ui.modeCombo.setFocus()
    qtbot.keyClick(ui.modeCombo, Qt.Key.Key_Down)
    ui.modelEdit.clear()
    qtbot.keyClicks(ui.allowedEdit, ", Bash(npm test:*)")
    qtbot.keyClicks(ui.disallowedEdit, "WebFetch")
    ui.inactiveCheck.click()
    ui.soundCheck.click()
    ui.workspacesList.setCurrentRow(0)
    qtbot.mouseClick(ui.removeWorkspaceButton, Qt.MouseButton.LeftButton)
    new_folder = str(tmp_path / "project")
    monkeypatch.setattr(pickers, "pick_folder",
                        lambda parent, title, on_chosen, start="": on_chosen(new_folder))
    qtbot.mouseClick(ui.addWorkspaceButton, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(ui.baseUrlEdit, "http://127.0.0.1:9000")
    ui.portSpin.setValue(9100)
    with qtbot.waitSignal(dialog.settings_saved) as blocker, \
            qtbot.assertNotEmitted(dialog.secret_entered):
        save(dialog, qtbot)
    saved: Settings = blocker.args[0]
    assert saved == Settings(
        default_backend=Backend.QODER, default_permission_mode=PermissionMode.PLAN,
        default_model=None, default_allowed_tools=["Read", "Bash(npm test:*)"],
        default_disallowed_tools=["WebFetch"],
        notifications=NotificationSettings(enabled=True, only_when_inactive=False, sound=True),
        trusted_workspaces=[new_folder], anthropic_base_url="http://127.0.0.1:9000",
        gateway_port=9100)
    assert original.default_model == "opus"  # the caller's copy is untouched
    assert not dialog.isVisible()


def test_secrets_show_status_never_values_and_leave_as_signals(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, keyring_status=USABLE,
                         stored_secrets=[SecretName.ANTHROPIC_API_KEY])
    ui = dialog.ui
    ui.tabs.setCurrentWidget(ui.accountsTab)
    assert dialog.secret_status(SecretName.ANTHROPIC_API_KEY) == STORED_TEXT
    assert dialog.secret_status(SecretName.QODER_TOKEN) == NOT_SET_TEXT
    assert ui.anthropicKeyEdit.text() == "" and ui.qoderTokenEdit.text() == ""
    assert ui.qoderTokenEdit.echoMode() == QLineEdit.EchoMode.Password
    assert ui.anthropicKeyEdit.echoMode() == QLineEdit.EchoMode.Password
    assert "OS keyring" in ui.keyringLabel.text()
    assert ui.anthropicKeyRemoveButton.isVisible()
    assert not ui.qoderTokenRemoveButton.isVisible()

    qtbot.keyClicks(ui.qoderTokenEdit, "pat-secret-123")
    assert "when you save" in dialog.secret_status(SecretName.QODER_TOKEN)
    assert all("pat-secret-123" not in label.text() for label in dialog.findChildren(QLabel))
    qtbot.mouseClick(ui.anthropicKeyRemoveButton, Qt.MouseButton.LeftButton)
    assert "removed" in dialog.secret_status(SecretName.ANTHROPIC_API_KEY)
    entered: list[tuple[str, str]] = []
    removed: list[str] = []
    dialog.secret_entered.connect(lambda name, value: entered.append((name, value)))
    dialog.secret_removed.connect(removed.append)
    with qtbot.waitSignal(dialog.settings_saved):
        save(dialog, qtbot)
    assert entered == [(SecretName.QODER_TOKEN.value, "pat-secret-123")]
    assert removed == [SecretName.ANTHROPIC_API_KEY.value]
    assert ui.qoderTokenEdit.text() == ""


def test_without_a_keyring_secrets_cannot_be_entered(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, keyring_status=UNUSABLE)
    ui = dialog.ui
    assert "No usable OS keyring" in ui.keyringLabel.text()
    assert "environment variables" in ui.keyringLabel.text()
    assert not ui.qoderTokenEdit.isEnabled()
    assert not ui.anthropicKeyEdit.isEnabled()
    assert "ANTHROPIC_API_KEY" in dialog.secret_status(SecretName.ANTHROPIC_API_KEY)
    with qtbot.assertNotEmitted(dialog.secret_entered):
        save(dialog, qtbot)
    dialog.set_keyring_status(USABLE)
    assert ui.qoderTokenEdit.isEnabled()
    dialog.set_secret_stored(SecretName.QODER_TOKEN, True)
    assert dialog.secret_status(SecretName.QODER_TOKEN) == STORED_TEXT


def test_invalid_values_are_reported_and_nothing_is_saved(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, keyring_status=USABLE)
    qtbot.keyClicks(dialog.ui.baseUrlEdit, "ftp://example")
    qtbot.keyClicks(dialog.ui.allowedEdit, "not a rule(")
    with qtbot.assertNotEmitted(dialog.settings_saved):
        save(dialog, qtbot)
    error = dialog.ui.errorLabel.text()
    assert "anthropic_base_url" in error and "default_allowed_tools" in error
    assert dialog.isVisible()


def test_cancel_emits_nothing(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(qtbot, keyring_status=USABLE)
    qtbot.keyClicks(dialog.ui.qoderTokenEdit, "pat-secret")
    with qtbot.assertNotEmitted(dialog.settings_saved), \
            qtbot.assertNotEmitted(dialog.secret_entered):
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
