"""A keyring two test processes share: ``qoder-desktop remote add`` stores a host's token
and the running ``qoder-desktop`` reads it, as both do with the person's Secret Service.

The tests' in-memory keyring lives in one process only, and this machine has no Secret
Service daemon, so a child process names this class in PYTHON_KEYRING_BACKEND (with
``tests`` on its PYTHONPATH) and its passwords live in the JSON file named by
`FILE_VARIABLE`, in the test's own temporary folder. It stands in for the Secret Service
(its subclass, so the app's check of trusted keyrings takes it) and never talks to D-Bus.
Test use only: it keeps secrets in a plain file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring import errors
from keyring.backends import SecretService

FILE_VARIABLE = "QODER_TEST_KEYRING_FILE"
BACKEND = f"{__name__}.SharedFileKeyring"
"""The PYTHON_KEYRING_BACKEND value that selects this keyring."""


class SharedFileKeyring(SecretService.Keyring):
    """A Secret Service stand-in whose passwords are in the file `FILE_VARIABLE` names."""

    priority = 1  # type: ignore[assignment]

    @staticmethod
    def _path() -> Path:
        return Path(os.environ[FILE_VARIABLE])

    def _load(self) -> dict[str, str]:
        try:
            return dict(json.loads(self._path().read_text(encoding="utf-8")))
        except FileNotFoundError:
            return {}

    def _save(self, passwords: dict[str, str]) -> None:
        path = self._path()
        temp = path.with_suffix(".tmp")
        temp.write_text(json.dumps(passwords), encoding="utf-8")
        os.chmod(temp, 0o600)
        os.replace(temp, path)

    def get_password(self, service: str, username: str) -> str | None:
        """The stored password, or None."""
        return self._load().get(f"{service}\0{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        """Store a password."""
        self._save({**self._load(), f"{service}\0{username}": password})

    def delete_password(self, service: str, username: str) -> None:
        """Remove a password; PasswordDeleteError when there is none."""
        passwords = self._load()
        if passwords.pop(f"{service}\0{username}", None) is None:
            raise errors.PasswordDeleteError("password not found")
        self._save(passwords)
