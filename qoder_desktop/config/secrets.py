"""Secrets (the Qoder access token, the Anthropic API key) in the OS keyring only.

Only real OS keyrings are trusted: Secret Service (GNOME Keyring, KeePassXC), libsecret,
KWallet, the macOS Keychain and the Windows Credential Locker. The ``fail`` and ``null``
backends, every ``keyrings.alt`` backend (they write files) and a chainer that would fall
back to any of those are refused. Without a usable keyring, secrets come from environment
variables and nothing is ever written anywhere else.

Secret values travel as `SecretValue`, whose ``repr``/``str`` never show them; no
exception message carries one; `RedactSecrets` scrubs them from log records.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # keyring (and its backend discovery) loads on first use, after paint
    from keyring.backend import KeyringBackend

SERVICE_NAME = "qoder-desktop"
MASK = "********"

ALLOWED_BACKENDS: frozenset[str] = frozenset({
    "keyring.backends.SecretService.Keyring",
    "keyring.backends.libsecret.Keyring",
    "keyring.backends.kwallet.DBusKeyring",
    "keyring.backends.kwallet.DBusKeyringKWallet4",
    "keyring.backends.macOS.Keyring",
    "keyring.backends.Windows.WinVaultKeyring",
})
"""Fully qualified class names of the OS keyrings we trust (subclasses included)."""

_HOW_TO_FIX = ("Install and unlock an OS keyring (GNOME Keyring or KWallet on Linux), then "
               "try again; or set the environment variable {env} before starting Qoder "
               "Desktop.")


GATEWAY_TOKEN_ENV = "QODER_DESKTOP_GATEWAY_TOKEN"
"""The gateway token's environment fallback (without a keyring); see `gateway.contract`."""

APP_ONLY_ENV = (GATEWAY_TOKEN_ENV,)
"""Variables the app reads that never go on to an agent's environment: whoever holds
the gateway token can answer the gateway's permission prompts."""


class SecretName(StrEnum):
    """The secrets the app knows; the value is the keyring user name."""

    QODER_TOKEN = "qoder-personal-access-token"
    ANTHROPIC_API_KEY = "anthropic-api-key"

    @property
    def env_var(self) -> str:
        """The environment variable used when no keyring is usable."""
        return {SecretName.QODER_TOKEN: "QODER_PERSONAL_ACCESS_TOKEN",
                SecretName.ANTHROPIC_API_KEY: "ANTHROPIC_API_KEY"}[self]

    @property
    def label(self) -> str:
        """A name to show people."""
        return {SecretName.QODER_TOKEN: "Qoder personal access token",
                SecretName.ANTHROPIC_API_KEY: "Anthropic API key"}[self]


class SecretSource(StrEnum):
    """Where a secret came from."""

    KEYRING = "keyring"
    ENVIRONMENT = "environment"


class SecretValue:
    """A secret string that does not show itself; call `reveal()` where it is needed."""

    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: SecretSource = SecretSource.KEYRING) -> None:
        self._value = value
        self.source = source

    def reveal(self) -> str:
        """The secret itself. Never log, print or store the result."""
        return self._value

    def __repr__(self) -> str:
        return f"SecretValue('{MASK}')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SecretValue):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a SecretValue cannot be pickled")


@dataclass(frozen=True)
class KeyringStatus:
    """Whether secrets can be kept in the keyring, and why (not).

    Attributes:
        usable: True when the backend is a trusted OS keyring.
        backend: the backend's class name.
        message: a sentence for people.
    """

    usable: bool
    backend: str
    message: str


class SecretStoreError(Exception):
    """A secret could not be stored, read or removed. Never contains the secret."""


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_alt(cls: type) -> bool:
    return any(c.__module__.split(".")[:2] == ["keyrings", "alt"] for c in cls.__mro__)


class SecretStore:
    """Reads and writes the app's secrets in the OS keyring, or reads the environment.

    Args:
        backend: the keyring backend (``keyring.get_keyring()`` when None).
        extra_allowed: more backend classes to trust (tests pass an in-memory one).
        redactor: a log filter that learns every secret value this store sees.
        environ: where environment variables come from (``os.environ`` when None).
    """

    def __init__(self, backend: KeyringBackend | None = None, *,
                 extra_allowed: tuple[type, ...] = (),
                 redactor: RedactSecrets | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self._backend = backend
        self._extra_allowed = extra_allowed
        self._redactor = redactor
        self._environ = environ

    @property
    def redactor(self) -> RedactSecrets | None:
        """The log filter that learns this store's secrets (None: none)."""
        return self._redactor

    @property
    def backend(self) -> KeyringBackend:
        """The keyring backend in use."""
        if self._backend is not None:
            return self._backend
        import keyring

        return keyring.get_keyring()

    def check_backend(self) -> KeyringStatus:
        """Say whether the backend is a keyring we trust with secrets."""
        try:
            backend = self.backend
        except Exception as exc:
            return KeyringStatus(False, "unknown", f"The keyring could not be loaded: {exc}.")
        name = _qualname(type(backend))
        problem = self._refusal(backend)
        if problem:
            return KeyringStatus(False, name, problem)
        return KeyringStatus(True, name, f"Secrets are kept in the OS keyring ({name}).")

    def _allowed_class(self, backend: KeyringBackend) -> bool:
        from keyring.backends import fail, null

        if _is_alt(type(backend)) or isinstance(backend, fail.Keyring | null.Keyring):
            return False
        return (isinstance(backend, self._extra_allowed) or
                any(_qualname(c) in ALLOWED_BACKENDS for c in type(backend).__mro__))

    def _refusal(self, backend: KeyringBackend) -> str | None:
        from keyring.backends import chainer, fail, null

        name = _qualname(type(backend))
        if _is_alt(type(backend)):
            return (f"The keyring backend {name} comes from keyrings.alt, which keeps "
                    "secrets in files; Qoder Desktop refuses it. Uninstall keyrings.alt.")
        if isinstance(backend, fail.Keyring):
            return "No OS keyring was found (no Secret Service, KWallet, Keychain or Vault)."
        if isinstance(backend, null.Keyring):
            return ("The null keyring is configured (PYTHON_KEYRING_BACKEND or keyringrc.cfg); "
                    "it silently drops every secret.")
        if isinstance(backend, chainer.ChainerBackend):
            wrapped = list(getattr(backend, "backends", []))
            refused = [_qualname(type(b)) for b in wrapped if not self._allowed_class(b)]
            if not wrapped:
                return "The keyring chainer has no OS keyring to chain."
            if refused:
                return (f"The keyring chainer would also use {', '.join(refused)}, which is "
                        "not an OS keyring Qoder Desktop trusts (uninstall keyrings.alt).")
            return None
        if self._allowed_class(backend):
            return None
        return f"The keyring backend {name} is not an OS keyring Qoder Desktop trusts."

    def _fail(self, name: SecretName, action: str, reason: str) -> NoReturn:
        raise SecretStoreError(
            f"Cannot {action} the {name.label}: {reason} "
            + _HOW_TO_FIX.format(env=name.env_var))

    def set(self, name: SecretName, value: str | SecretValue) -> None:
        """Store a secret in the keyring and check that the keyring kept it.

        Raises:
            SecretStoreError: no trusted keyring, the keyring failed or lost the value.
        """
        secret = value.reveal() if isinstance(value, SecretValue) else value
        if not secret:
            raise SecretStoreError(f"The {name.label} is empty; use delete() to remove it.")
        status = self.check_backend()
        if not status.usable:
            self._fail(name, "save", status.message)
        failure = self._call(lambda: self.backend.set_password(SERVICE_NAME, name.value,
                                                               secret), secret)
        if failure:
            self._fail(name, "save", failure)
        result: list[str | None] = []
        failure = self._call(
            lambda: result.append(self.backend.get_password(SERVICE_NAME, name.value)), secret)
        if failure:
            self._fail(name, "check", failure)
        read_back = result[0] if result else None
        if read_back is None or not hmac.compare_digest(read_back.encode(), secret.encode()):
            self._fail(name, "save", f"the {status.backend} keyring did not keep the secret "
                                     "(reading it back gave something else).")
        if self._redactor is not None:
            self._redactor.add(secret)

    def get(self, name: SecretName) -> SecretValue | None:
        """The secret from the keyring, else from its environment variable, else None.

        Raises:
            SecretStoreError: the keyring is usable but refused to answer (e.g. locked).
        """
        found: SecretValue | None = None
        if self.check_backend().usable:
            result: list[str | None] = []
            failure = self._call(
                lambda: result.append(self.backend.get_password(SERVICE_NAME, name.value)), "")
            if failure:
                self._fail(name, "read", failure)
            if result and result[0]:
                found = SecretValue(result[0], SecretSource.KEYRING)
        if found is None:
            env = (os.environ if self._environ is None else self._environ).get(name.env_var)
            if env:
                found = SecretValue(env, SecretSource.ENVIRONMENT)
        if found is not None and self._redactor is not None:
            self._redactor.add(found)
        return found

    def delete(self, name: SecretName) -> bool:
        """Remove a secret from the keyring; False if it was not there.

        Raises:
            SecretStoreError: no trusted keyring, or the keyring failed.
        """
        from keyring import errors as keyring_errors

        status = self.check_backend()
        if not status.usable:
            self._fail(name, "remove", status.message)
        try:
            self.backend.delete_password(SERVICE_NAME, name.value)
        except keyring_errors.PasswordDeleteError:
            return False
        except keyring_errors.KeyringError as exc:
            reason = _reason(exc, "")
        else:
            return True
        self._fail(name, "remove", reason)

    @staticmethod
    def _call(action: Any, secret: str) -> str | None:
        """Run a keyring call; a failure becomes a sentence (never holding `secret`)."""
        from keyring import errors as keyring_errors

        try:
            action()
        except keyring_errors.KeyringError as exc:
            return _reason(exc, secret)
        except Exception as exc:  # D-Bus and platform errors are not KeyringErrors
            return _reason(exc, secret)
        return None


def _reason(exc: BaseException, secret: str) -> str:
    from keyring import errors as keyring_errors

    text = str(exc)
    if secret:
        text = text.replace(secret, MASK)
    if isinstance(exc, keyring_errors.KeyringLocked):
        return "the keyring is locked (the unlock prompt was dismissed or failed)."
    if isinstance(exc, keyring_errors.NoKeyringError):
        return "no OS keyring is available."
    if isinstance(exc, keyring_errors.InitError):
        return f"the keyring could not be started ({text})."
    if isinstance(exc, keyring_errors.PasswordSetError):
        return f"the keyring refused to store it ({text})."
    return f"the keyring failed ({type(exc).__name__}: {text})."


DEFAULT_PATTERNS: tuple[str, ...] = (
    r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]+",
    r"(?<![A-Za-z0-9])pat_[A-Za-z0-9_-]+",
)
"""Shapes of secrets that are redacted even when nobody registered them."""

MIN_SECRET_LENGTH = 4
"""Shorter values are not registered (they would blank out ordinary text)."""


class RedactSecrets(logging.Filter):
    """A logging filter that replaces secrets in records with ``********``.

    Install it on the handlers that write logs (`install` does the root logger and its
    handlers); a filter on a logger alone does not see records from child loggers.
    """

    def __init__(self, secrets: Iterable[str | SecretValue] = (),
                 patterns: Iterable[str] = DEFAULT_PATTERNS) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._patterns = tuple(patterns)
        self._secrets: set[str] = set()
        self._regex = self._compile()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | SecretValue) -> None:
        """Redact this value from now on."""
        text = secret.reveal() if isinstance(secret, SecretValue) else secret
        if len(text) < MIN_SECRET_LENGTH:
            return
        with self._lock:
            if text not in self._secrets:
                self._secrets.add(text)
                self._regex = self._compile()

    def _compile(self) -> re.Pattern[str]:
        literal = [re.escape(s) for s in sorted(self._secrets, key=len, reverse=True)]
        return re.compile("|".join([*literal, *self._patterns]) or r"(?!x)x")

    def redact(self, text: str) -> str:
        """`text` with every known secret and secret-shaped token masked."""
        return self._regex.sub(MASK, text)

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask secrets in the message, its arguments and any traceback text."""
        try:
            message = record.getMessage()
        except Exception:
            message = f"{record.msg} {record.args!r}"
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True

    def install(self, logger: logging.Logger | None = None) -> None:
        """Add this filter to `logger` (root when None) and to each of its handlers."""
        target = logger or logging.getLogger()
        target.addFilter(self)
        for handler in target.handlers:
            handler.addFilter(self)
