"""The benchmarks' keyring: in memory, never the user's (Away mode's CA key, the devices'
row key, tokens)."""

from __future__ import annotations

from typing import Any


def memory_keyring_type() -> Any:
    """A keyring backend class that keeps passwords in a dict (keyring imported on call)."""
    from keyring.backend import KeyringBackend

    class MemoryKeyring(KeyringBackend):
        """Passwords in memory, for one benchmark run."""

        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.passwords: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.passwords.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.passwords[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.passwords.pop((service, username), None)

    return MemoryKeyring
