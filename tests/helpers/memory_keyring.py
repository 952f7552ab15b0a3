"""An in-memory keyring backend for tests (never touches the user's keyring)."""

from __future__ import annotations

import threading

from keyring import errors
from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    """Keeps passwords in a dict; conforms to keyring's backend interface."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        """The stored password, or None."""
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        """Store a password."""
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        """Remove a password; PasswordDeleteError when there is none."""
        try:
            del self.passwords[(service, username)]
        except KeyError:
            raise errors.PasswordDeleteError("password not found") from None


class SlowKeyring(MemoryKeyring):
    """A `MemoryKeyring` whose every call waits until `release` is set (or `hold` s pass).

    It stands for a keyring that hangs on D-Bus or waits behind an unlock prompt. Tests
    set `release` when they are done, so the app's keyring thread is never left blocked.
    """

    def __init__(self, hold: float = 30.0) -> None:
        super().__init__()
        self.hold = hold
        self.release = threading.Event()
        self.calls = 0

    def _wait(self) -> None:
        self.calls += 1
        self.release.wait(self.hold)

    def get_password(self, service: str, username: str) -> str | None:
        """The stored password, once the keyring answers."""
        self._wait()
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        """Store a password, once the keyring answers."""
        self._wait()
        super().set_password(service, username, password)
