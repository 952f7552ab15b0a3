"""The app's settings while it runs: the current values, saving them, the keyring checks
of the settings dialog (which loads when a person first opens it)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

from qoder_desktop.config.keyring_calls import KeyringTimeout, keyring_call
from qoder_desktop.config.secrets import SecretName, SecretStore
from qoder_desktop.config.settings import Settings, save_settings
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # (with its pages and pickers, loaded when first opened)
    from qoder_desktop.ui.windows.settings_dialog import SettingsDialog


class CurrentSettings:
    """The settings in force; built before the core, so the core can read them through
    it (e.g. `is_trusted`) and always sees the values last saved."""

    def __init__(self, settings: Settings, path: Path | str) -> None:
        self.value = settings
        self.path = Path(path)

    def is_trusted(self, cwd: str | os.PathLike[str]) -> bool:
        """True when the person trusts the folder `cwd` (see `Settings.is_trusted`)."""
        return self.value.is_trusted(cwd)

    def save(self, settings: Settings) -> None:
        """Write `settings` to the settings file and make them current."""
        save_settings(settings, self.path)
        self.value = settings


class SettingsController:
    """The settings dialog: opened once at a time, saved to the file, secrets to the
    keyring (every keyring call off the GUI thread)."""

    def __init__(self, current: CurrentSettings, secrets: SecretStore, window: MainWindow,
                 tasks: Tasks) -> None:
        self.current = current
        self.secrets = secrets
        self._window = window
        self._tasks = tasks
        self.dialog: SettingsDialog | None = None

    def open(self) -> SettingsDialog | None:
        """Show the settings dialog (non-modal); returns it when it is new, None when the
        open one was raised instead."""
        if self.dialog is not None:
            self.dialog.raise_()
            return None
        from qoder_desktop.ui.windows.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.current.value, self._window)
        dialog.finished.connect(lambda _code: setattr(self, "dialog", None))
        self.dialog = dialog
        dialog.open()
        check = self._tasks.spawn(self._refresh_keyring(dialog), "checking the keyring")
        # The check only fills this dialog: closing it ends the check (a keyring that
        # hangs behind an unlock prompt would otherwise keep it waiting after the close).
        dialog.finished.connect(lambda _code: check.cancel())
        return dialog

    async def _refresh_keyring(self, dialog: SettingsDialog) -> None:
        """Tell the dialog what the keyring holds; a slow keyring is shown as waiting,
        one that does not answer as not known (never as "Not set")."""
        try:
            status = await keyring_call(self.secrets.check_backend, "check the keyring",
                                        on_slow=dialog.set_secrets_waiting)
            dialog.set_keyring_status(status)
            for name in SecretName:
                stored = await keyring_call(functools.partial(self.secrets.get, name),
                                            f"read the {name.label}",
                                            on_slow=dialog.set_secrets_waiting)
                dialog.set_secret_stored(name, stored is not None)
        except KeyringTimeout as exc:
            dialog.set_secrets_waiting("Not known: the keyring did not answer")
            self._window.show_status(str(exc))

    def store_secret(self, name: str, value: str) -> None:
        """Save a secret the person typed in the keyring (in the background)."""
        self._tasks.spawn(self._store_secret(name, value), "saving the secret")

    async def _store_secret(self, name: str, value: str) -> None:
        secret = SecretName(name)
        await keyring_call(lambda: self.secrets.set(secret, value), f"save the {secret.label}")
        if self.dialog is not None:
            self.dialog.set_secret_stored(name, True)
        self._window.show_status(f"{SecretName(name).label} saved in the keyring.")

    def remove_secret(self, name: str) -> None:
        """Remove a secret the person chose to remove from the keyring (in the background)."""
        self._tasks.spawn(self._remove_secret(name), "removing the secret")

    async def _remove_secret(self, name: str) -> None:
        secret = SecretName(name)
        await keyring_call(lambda: self.secrets.delete(secret), f"remove the {secret.label}")
        if self.dialog is not None:
            self.dialog.set_secret_stored(name, False)
        self._window.show_status(f"{secret.label} removed from the keyring.")

    def save(self, settings: Settings) -> None:
        """Save the dialog's settings and make them current."""
        self.current.save(settings)
        self._window.show_status("Settings saved.")
