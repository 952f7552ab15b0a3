"""The settings dialog: edits a copy of `Settings`; secrets go out as signals only.

The dialog never sees a stored secret's value: it is told which secrets exist and shows
"Stored in keyring" or "Not set" — until told, neither (a slow keyring shows "Waiting for
the keyring…", never "Not set" for a secret that may be stored). A newly typed secret is
handed to the app with `secret_entered`, which stores it in the keyring off the GUI
thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, TypeVar

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.config.secrets import SecretName
from qoder_desktop.config.settings import TERMINAL_WAIT_MAX, Settings
from qoder_desktop.domain.hook_events import TerminalAgent
from qoder_desktop.domain.models import Backend, PermissionMode
from qoder_desktop.ui.forms.ui_settings_dialog import Ui_SettingsDialog
from qoder_desktop.ui.widgets import pickers
from qoder_desktop.ui.widgets.session_list import BACKEND_LABELS
from qoder_desktop.ui.windows.remote_hosts_page import RemoteHostsPage

if TYPE_CHECKING:  # (Away mode's page loads with the first settings dialog)
    from qoder_desktop.ui.windows.devices_page import DevicesPage

STORED_TEXT = "Stored in keyring"
NOT_SET_TEXT = "Not set"
WAITING_TEXT = "Waiting for the keyring…"
"""Shown for a secret while a slow keyring has not said whether it is stored."""


W = TypeVar("W", bound=QWidget)


def _named(widget: W, name: str) -> W:
    widget.setObjectName(name)
    return widget


class KeyringState(Protocol):
    """What the dialog needs to know about the keyring (`secrets.KeyringStatus` fits)."""

    @property
    def usable(self) -> bool:
        """True when secrets can be stored in the keyring."""
        ...

    @property
    def message(self) -> str:
        """A sentence for people."""
        ...


class SettingsDialog(QDialog):
    """Edits the user's settings and takes new credentials; open it with `open()`.

    Signals:
        settings_saved(Settings): the person saved these settings.
        secret_entered(str, str): store this secret (a `SecretName` value, the new value).
        secret_removed(str): remove this secret (a `SecretName` value) from the keyring.
        hook_install_requested(str): install the terminal hook for this agent.
        hook_uninstall_requested(str): remove the terminal hook of this agent.
    """

    settings_saved = Signal(object)
    secret_entered = Signal(str, str)
    secret_removed = Signal(str)
    hook_install_requested = Signal(str)
    hook_uninstall_requested = Signal(str)

    def __init__(self, settings: Settings, parent: QWidget | None = None, *,
                 keyring_status: KeyringState | None = None,
                 stored_secrets: Iterable[SecretName | str] = ()) -> None:
        super().__init__(parent)
        self.ui = Ui_SettingsDialog()
        self.ui.setupUi(self)
        ui = self.ui
        self._settings = settings.model_copy(deep=True)
        self._stored = {SecretName(name) for name in stored_secrets}
        self._removing: set[SecretName] = set()
        self._unknown: dict[SecretName, str] = {} if keyring_status is not None else {
            name: "" for name in SecretName}
        """Secrets not yet known to be stored or not, with what their row says meanwhile."""
        self._keyring_usable = True
        self._rows: dict[SecretName, tuple[QLineEdit, QLabel, QPushButton]] = {
            SecretName.QODER_TOKEN: (ui.qoderTokenEdit, ui.qoderTokenStatus,
                                     ui.qoderTokenRemoveButton),
            SecretName.ANTHROPIC_API_KEY: (ui.anthropicKeyEdit, ui.anthropicKeyStatus,
                                           ui.anthropicKeyRemoveButton),
        }
        for backend in (Backend.CLAUDE, Backend.QODER):
            ui.backendCombo.addItem(BACKEND_LABELS[backend], backend.value)
        for mode in PermissionMode:
            if not mode.needs_confirmation:
                ui.modeCombo.addItem(mode.value, mode.value)
        ui.errorLabel.setObjectName("formError")
        ui.errorLabel.hide()
        ui.keyringLabel.setObjectName("keyringStatus")
        for _edit, status_label, _remove in self._rows.values():
            status_label.setProperty("role", "hint")
        ui.buttonBox.accepted.connect(self.save)
        ui.buttonBox.rejected.connect(self.reject)
        save = ui.buttonBox.button(QDialogButtonBox.StandardButton.Save)
        save.setObjectName("saveButton")
        save.setAccessibleDescription("Keep the settings of every page and close")
        ui.buttonBox.button(QDialogButtonBox.StandardButton.Cancel).setAccessibleDescription(
            "Close without changing the settings")
        ui.notifyCheck.toggled.connect(ui.inactiveCheck.setEnabled)
        ui.notifyCheck.toggled.connect(ui.soundCheck.setEnabled)
        ui.addWorkspaceButton.clicked.connect(self._add_workspace)
        ui.removeWorkspaceButton.clicked.connect(self._remove_workspace)
        ui.workspacesList.currentRowChanged.connect(
            lambda row: ui.removeWorkspaceButton.setEnabled(row >= 0))
        for name, (edit, _status, remove) in self._rows.items():
            edit.textChanged.connect(lambda _t, n=name: self._update_secret_row(n))
            remove.clicked.connect(lambda _=False, n=name: self._mark_removed(n))
        self._build_terminal_tab()
        self.remote_hosts_page = RemoteHostsPage()
        self.ui.tabs.setTabToolTip(self.ui.tabs.addTab(self.remote_hosts_page, "Re&mote hosts"),
                                   "Send the prompts of agents on other machines (over SSH) here")
        from qoder_desktop.ui.windows.devices_page import DevicesPage

        self.devices_page = DevicesPage(self._settings.away)
        self.ui.tabs.setTabToolTip(self.ui.tabs.addTab(self.devices_page, "De&vices"),
                                   "Away mode: answer from a paired phone")
        self.ui.tabs.setUsesScrollButtons(False)  # (every page's tab stays in sight)
        self._load(self._settings)
        self.set_keyring_status(keyring_status)

    def _build_terminal_tab(self) -> None:
        """The "Terminal agents" tab: hook status and buttons per agent, and the wait."""
        tab = _named(QWidget(), "terminalTab")
        layout = QVBoxLayout(tab)
        hint = QLabel("Agents you start yourself in a terminal or an editor (claude, "
                      "qodercli) can ask here instead of in the terminal: install the "
                      "hook, then start them as usual. Whoever answers first wins; the "
                      "terminal prompt stays.")
        hint.setWordWrap(True)
        hint.setProperty("role", "hint")
        layout.addWidget(hint)
        self._hook_rows: dict[str, tuple[QLabel, QPushButton, QPushButton]] = {}
        for agent in TerminalAgent:
            label = agent.label
            box = _named(QGroupBox(label), f"{agent}HookGroup")
            row = QHBoxLayout(box)
            status = _named(QLabel("Checking…"), f"{agent}HookStatus")
            status.setTextFormat(Qt.TextFormat.PlainText)
            status.setWordWrap(True)
            install = _named(QPushButton("Install"), f"{agent}HookInstall")
            uninstall = _named(QPushButton("Uninstall"), f"{agent}HookUninstall")
            install.setAccessibleName(f"Install the {label} hook")
            install.setAccessibleDescription(f"Send {label}'s permission prompts here too")
            uninstall.setAccessibleName(f"Uninstall the {label} hook")
            uninstall.setAccessibleDescription(
                f"{label}'s permission prompts stay in its terminal only")
            install.clicked.connect(lambda _=False, a=agent: self.hook_install_requested.emit(a))
            uninstall.clicked.connect(
                lambda _=False, a=agent: self.hook_uninstall_requested.emit(a))
            row.addWidget(status, 1)
            row.addWidget(install)
            row.addWidget(uninstall)
            layout.addWidget(box)
            self._hook_rows[agent] = (status, install, uninstall)
        form = QFormLayout()
        self.terminal_wait_spin = _named(QSpinBox(), "terminalWaitSpin")
        self.terminal_wait_spin.setRange(10, TERMINAL_WAIT_MAX)
        self.terminal_wait_spin.setSuffix(" s")
        self.terminal_wait_spin.setToolTip(
            "How long a terminal prompt waits for you here; then the terminal asks "
            "(nothing is allowed by waiting).")
        form.addRow("&Wait for an answer here:", self.terminal_wait_spin)
        layout.addLayout(form)
        layout.addStretch(1)
        self.ui.tabs.setTabToolTip(self.ui.tabs.addTab(tab, "&Terminal agents"),
                                   "Send the prompts of agents you start yourself here")

    def show_devices_page(self) -> DevicesPage:
        """Bring the Devices page (Away mode) to the front."""
        self.ui.tabs.setCurrentWidget(self.devices_page)
        return self.devices_page

    def set_hook_status(self, agent: str, text: str, installed: bool) -> None:
        """Show whether the terminal hook of `agent` is installed (`text`: plain text)."""
        status, install, uninstall = self._hook_rows[agent]
        status.setText(text)
        status.setProperty("warning", False)
        verb = "Reinstall" if installed else "Install"
        install.setText(verb)
        install.setAccessibleName(f"{verb} the {TerminalAgent(agent).label} hook")
        uninstall.setEnabled(installed)

    def set_hook_error(self, agent: str, message: str) -> None:
        """Show why the terminal hook of `agent` could not be changed."""
        status = self._hook_rows[agent][0]
        status.setText(message)
        status.setProperty("warning", True)

    def hook_status(self, agent: str) -> str:
        """The status text shown for `agent`'s terminal hook."""
        return self._hook_rows[agent][0].text()

    # -- filling in --------------------------------------------------------------------

    def _load(self, settings: Settings) -> None:
        ui = self.ui
        ui.backendCombo.setCurrentIndex(max(0, ui.backendCombo.findData(
            settings.default_backend.value)))
        ui.modeCombo.setCurrentIndex(max(0, ui.modeCombo.findData(
            settings.default_permission_mode.value)))
        ui.modelEdit.setText(settings.default_model or "")
        ui.allowedEdit.setText(pickers.join_list(settings.default_allowed_tools))
        ui.disallowedEdit.setText(pickers.join_list(settings.default_disallowed_tools))
        ui.notifyCheck.setChecked(settings.notifications.enabled)
        ui.inactiveCheck.setChecked(settings.notifications.only_when_inactive)
        ui.soundCheck.setChecked(settings.notifications.sound)
        ui.inactiveCheck.setEnabled(settings.notifications.enabled)
        ui.soundCheck.setEnabled(settings.notifications.enabled)
        ui.workspacesList.clear()
        ui.workspacesList.addItems(settings.trusted_workspaces)
        ui.baseUrlEdit.setText(settings.anthropic_base_url or "")
        ui.portSpin.setValue(settings.gateway_port)
        self.terminal_wait_spin.setValue(settings.terminal_wait_seconds)

    def set_keyring_status(self, status: KeyringState | None) -> None:
        """Show whether secrets can go to the keyring (None: not known yet)."""
        usable = True if status is None else bool(status.usable)
        self._keyring_usable = usable
        label = self.ui.keyringLabel
        if status is None:
            label.setText("Secrets are kept only in the OS keyring.")
        elif usable:
            label.setText(status.message)
        else:
            label.setText(f"{status.message} Without a keyring, Qoder Desktop reads "
                          "credentials from environment variables and never stores them.")
        label.setProperty("warning", not usable)
        label.style().unpolish(label)
        label.style().polish(label)
        for name in self._rows:
            self._update_secret_row(name)

    def set_secret_stored(self, name: SecretName | str, stored: bool) -> None:
        """Tell the dialog whether a secret is in the keyring (never its value)."""
        secret = SecretName(name)
        if stored:
            self._stored.add(secret)
        else:
            self._stored.discard(secret)
        self._removing.discard(secret)
        self._unknown.pop(secret, None)
        self._update_secret_row(secret)

    def set_secrets_waiting(self, note: str = WAITING_TEXT) -> None:
        """The keyring is slow (or did not answer): every secret not known yet says
        `note` instead of a guess."""
        for name in self._unknown:
            self._unknown[name] = note
            self._update_secret_row(name)

    def secret_status(self, name: SecretName | str) -> str:
        """The status text shown for a secret."""
        return self._rows[SecretName(name)][1].text()

    def _update_secret_row(self, name: SecretName) -> None:
        edit, status, remove = self._rows[name]
        edit.setEnabled(self._keyring_usable)
        remove.setVisible(name in self._stored and name not in self._removing)
        remove.setEnabled(self._keyring_usable)
        if not self._keyring_usable:
            edit.setPlaceholderText(f"Set {name.env_var} in the environment instead")
            status.setText(f"Not available: no usable keyring (reads {name.env_var})")
            return
        edit.setPlaceholderText("Enter a new value to replace it" if name in self._stored
                                else f"Paste your {name.label}")
        if edit.text():
            status.setText("Will be stored in the keyring when you save")
        elif name in self._removing:
            status.setText("Will be removed from the keyring when you save")
        elif name in self._unknown:
            status.setText(self._unknown[name])
        else:
            status.setText(STORED_TEXT if name in self._stored else NOT_SET_TEXT)

    def _mark_removed(self, name: SecretName) -> None:
        self._removing.add(name)
        self._rows[name][0].clear()
        self._update_secret_row(name)

    def _add_workspace(self) -> None:
        def add(path: str) -> None:
            items = [self.ui.workspacesList.item(i).text()
                     for i in range(self.ui.workspacesList.count())]
            if path not in items:
                self.ui.workspacesList.addItem(path)

        pickers.pick_folder(self, "Trust a workspace folder", add)

    def _remove_workspace(self) -> None:
        row = self.ui.workspacesList.currentRow()
        if row >= 0:
            self.ui.workspacesList.takeItem(row)

    # -- reading back ------------------------------------------------------------------

    def edited_settings(self) -> Settings:
        """The settings as edited.

        Raises:
            ValueError: a field is invalid (the message names it).
        """
        ui = self.ui
        data = self._settings.model_dump()
        data.update(
            default_backend=Backend(ui.backendCombo.currentData()),
            default_permission_mode=PermissionMode(ui.modeCombo.currentData()),
            default_model=ui.modelEdit.text().strip() or None,
            default_allowed_tools=pickers.split_list(ui.allowedEdit.text()),
            default_disallowed_tools=pickers.split_list(ui.disallowedEdit.text()),
            notifications={"enabled": ui.notifyCheck.isChecked(),
                           "only_when_inactive": ui.inactiveCheck.isChecked(),
                           "sound": ui.soundCheck.isChecked()},
            trusted_workspaces=[ui.workspacesList.item(i).text()
                                for i in range(ui.workspacesList.count())],
            anthropic_base_url=ui.baseUrlEdit.text().strip() or None,
            gateway_port=ui.portSpin.value(),
            terminal_wait_seconds=self.terminal_wait_spin.value(),
            away=self.devices_page.edited(self._settings.away),
        )
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                where = ".".join(str(part) for part in error["loc"])
                problems.append(f"{where}: {str(error['msg']).removeprefix('Value error, ')}")
            raise ValueError("\n".join(problems)) from None

    def save(self) -> None:
        """Check and emit the settings, then each secret change; close on success."""
        try:
            settings = self.edited_settings()
        except ValueError as exc:
            self.ui.errorLabel.setText(str(exc))
            self.ui.errorLabel.show()
            return
        self.ui.errorLabel.hide()
        self.settings_saved.emit(settings)
        if self._keyring_usable:
            for name, (edit, _status, _remove) in self._rows.items():
                value = edit.text().strip()
                if value:
                    self.secret_entered.emit(name.value, value)
                elif name in self._removing:
                    self.secret_removed.emit(name.value)
                edit.clear()
        self.accept()
