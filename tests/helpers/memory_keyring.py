"""An in-memory keyring backend for tests (never touches the user's keyring)."""

from __future__ import annotations

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
