"""Away mode's own keyring entries: the CA key, the device-list MAC key, revoked phones.

They live in the OS keyring only (service ``qoder-desktop``), never in a file and never
in the environment: without a trusted keyring Away mode does not start. The calls here
block; callers run them on the keyring thread (`config.keyring_calls.keyring_call`). No
message here ever carries a value.
"""

from __future__ import annotations

import hmac

from qoder_desktop.config.secrets import SERVICE_NAME, SecretStore

CA_KEY_ENTRY = "away-ca-key"
"""The keyring user name of the desk CA's private key (PKCS#8 PEM)."""
DEVICE_MAC_KEY_ENTRY = "away-device-mac-key"
"""The keyring user name of the key that authenticates the rows of the device list."""
REVOKED_DEVICES_ENTRY = "away-revoked-devices"
"""The keyring user name of the ids of revoked phones (a JSON list): revocation holds even
when an old copy of a device's row is put back into SQLite."""

_HOW_TO_FIX = ("Away mode keeps its keys in the OS keyring only: install and unlock one "
               "(GNOME Keyring or KWallet on Linux), then try again.")


class KeyringUnavailable(RuntimeError):
    """Away mode's keys cannot be read or kept: the message is a sentence for the person."""


def check_usable(store: SecretStore) -> None:
    """Raise `KeyringUnavailable` unless the store's backend is a keyring we trust."""
    status = store.check_backend()
    if not status.usable:
        raise KeyringUnavailable(f"{status.message} {_HOW_TO_FIX}")


def read_entry(store: SecretStore, entry: str) -> str | None:
    """The entry's value, or None when there is none.

    Raises:
        KeyringUnavailable: no trusted keyring, or it failed (locked, D-Bus error).
    """
    check_usable(store)
    try:
        value = store.backend.get_password(SERVICE_NAME, entry)
    except Exception as exc:  # D-Bus and platform errors are not KeyringErrors
        raise KeyringUnavailable(f"The keyring failed reading Away mode's key "
                                 f"({type(exc).__name__}). {_HOW_TO_FIX}") from None
    if value and store.redactor is not None:
        store.redactor.add(value)  # never in a log from here on
    return value or None


def write_entry(store: SecretStore, entry: str, value: str) -> None:
    """Keep `value` under `entry` and check that the keyring kept it.

    Raises:
        KeyringUnavailable: no trusted keyring, it failed, or it gave back something else.
    """
    check_usable(store)
    if store.redactor is not None:
        store.redactor.add(value)
    try:
        store.backend.set_password(SERVICE_NAME, entry, value)
        read_back = store.backend.get_password(SERVICE_NAME, entry)
    except Exception as exc:  # the exception text is not shown: it could echo the value
        raise KeyringUnavailable(f"The keyring failed storing Away mode's key "
                                 f"({type(exc).__name__}). {_HOW_TO_FIX}") from None
    if read_back is None or not hmac.compare_digest(read_back.encode(), value.encode()):
        raise KeyringUnavailable("The keyring did not keep Away mode's key (reading it back "
                                 f"gave something else). {_HOW_TO_FIX}")
