"""Secrets: keyring backend allowlist, round-trip check, env fallback, no leaks."""

from __future__ import annotations

import io
import logging
import pickle
from typing import Any, ClassVar

import keyring
import pytest
from helpers.memory_keyring import MemoryKeyring
from keyring import errors
from keyring.backends import chainer, fail, null
from keyring.testing.backend import BackendBasicTests

from qoder_desktop.config.secrets import (
    SERVICE_NAME,
    RedactSecrets,
    SecretName,
    SecretSource,
    SecretStore,
    SecretStoreError,
    SecretValue,
)

TOKEN = "pat_S3cr3t-token-value_0123456789"
API_KEY = "sk-ant-api03-abcDEF_ghi-jkl"
OPAQUE = "correct horse battery staple"


class TestMemoryKeyringConformance(BackendBasicTests):
    """keyring's own conformance tests against the in-memory test backend."""

    def init_keyring(self) -> MemoryKeyring:
        return MemoryKeyring()


def _store(backend: Any) -> SecretStore:
    return SecretStore(backend, extra_allowed=(MemoryKeyring,))


class DroppingKeyring(MemoryKeyring):
    """Says yes to every write and keeps nothing."""

    def set_password(self, service: str, username: str, password: str) -> None:
        return None


class GarblingKeyring(MemoryKeyring):
    """Keeps something, but not what it was given."""

    def set_password(self, service: str, username: str, password: str) -> None:
        super().set_password(service, username, password[:-1])


class LockedKeyring(MemoryKeyring):
    """Every operation fails as if the unlock prompt was dismissed."""

    def get_password(self, service: str, username: str) -> str | None:
        raise errors.KeyringLocked(f"Failed to unlock the collection for {username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise errors.PasswordSetError(f"could not store {password!r}")


PlaintextLike = type("PlaintextKeyring", (MemoryKeyring,), {"__module__": "keyrings.alt.file"})


class FakeChainer(chainer.ChainerBackend):
    """A chainer whose chained backends the test decides."""

    backends: ClassVar[list[Any]] = []


def test_the_fixture_installed_the_memory_keyring(memory_keyring: MemoryKeyring) -> None:
    assert keyring.get_keyring() is memory_keyring
    store = SecretStore(extra_allowed=(MemoryKeyring,))
    store.set(SecretName.ANTHROPIC_API_KEY, API_KEY)
    assert memory_keyring.passwords == {(SERVICE_NAME, "anthropic-api-key"): API_KEY}


def test_memory_keyring_is_not_trusted_by_default() -> None:
    status = SecretStore().check_backend()
    assert not status.usable and "not an OS keyring" in status.message


def test_round_trip_and_delete() -> None:
    store = _store(MemoryKeyring())
    assert store.check_backend().usable
    store.set(SecretName.QODER_TOKEN, TOKEN)
    got = store.get(SecretName.QODER_TOKEN)
    assert got is not None and got.reveal() == TOKEN and got.source is SecretSource.KEYRING
    assert store.get(SecretName.ANTHROPIC_API_KEY) is None
    assert store.delete(SecretName.QODER_TOKEN) is True
    assert store.delete(SecretName.QODER_TOKEN) is False
    assert store.get(SecretName.QODER_TOKEN) is None
    store.set(SecretName.QODER_TOKEN, SecretValue(TOKEN))
    assert store.get(SecretName.QODER_TOKEN) == SecretValue(TOKEN)


@pytest.mark.parametrize(("backend", "words"), [
    (null.Keyring(), "null keyring"),
    (fail.Keyring(), "No OS keyring was found"),
    (PlaintextLike(), "keyrings.alt"),
])
def test_untrusted_backends_are_refused_with_clear_messages(backend: Any, words: str) -> None:
    store = _store(backend)  # even an explicit allow cannot rescue these
    status = store.check_backend()
    assert not status.usable and words in status.message
    with pytest.raises(SecretStoreError) as info:
        store.set(SecretName.ANTHROPIC_API_KEY, API_KEY)
    message = str(info.value)
    assert words in message
    assert "GNOME Keyring or KWallet" in message and "ANTHROPIC_API_KEY" in message
    assert API_KEY not in message
    with pytest.raises(SecretStoreError):
        store.delete(SecretName.ANTHROPIC_API_KEY)


def test_plaintext_like_backend_never_receives_the_secret() -> None:
    backend = PlaintextLike()
    with pytest.raises(SecretStoreError):
        _store(backend).set(SecretName.QODER_TOKEN, TOKEN)
    assert backend.passwords == {}


def test_chainer_is_trusted_only_when_everything_chained_is(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FakeChainer, "backends", [])
    assert "no OS keyring" in _store(FakeChainer()).check_backend().message
    monkeypatch.setattr(FakeChainer, "backends", [PlaintextLike()])
    status = _store(FakeChainer()).check_backend()
    assert not status.usable and "keyrings.alt.file.PlaintextKeyring" in status.message
    monkeypatch.setattr(FakeChainer, "backends", [MemoryKeyring(), PlaintextLike()])
    assert not _store(FakeChainer()).check_backend().usable
    monkeypatch.setattr(FakeChainer, "backends", [MemoryKeyring()])
    assert _store(FakeChainer()).check_backend().usable
    assert not SecretStore(FakeChainer()).check_backend().usable


def test_real_os_keyring_classes_are_on_the_allowlist() -> None:
    from keyring.backends import SecretService, kwallet

    store = SecretStore(SecretService.Keyring())
    assert store._refusal(SecretService.Keyring()) is None
    assert store._refusal(kwallet.DBusKeyring()) is None


@pytest.mark.parametrize("backend_class", [DroppingKeyring, GarblingKeyring])
def test_round_trip_check_catches_lost_writes(backend_class: type[MemoryKeyring]) -> None:
    store = SecretStore(backend_class(), extra_allowed=(backend_class,))
    with pytest.raises(SecretStoreError, match="keyring did not keep the secret") as info:
        store.set(SecretName.ANTHROPIC_API_KEY, API_KEY)
    assert API_KEY not in str(info.value) and API_KEY[:-1] not in str(info.value)


def test_keyring_errors_become_actionable_and_secret_free() -> None:
    store = SecretStore(LockedKeyring(), extra_allowed=(LockedKeyring,))
    with pytest.raises(SecretStoreError) as info:
        store.set(SecretName.QODER_TOKEN, OPAQUE)
    text = str(info.value)
    assert OPAQUE not in text and "********" in text
    assert "refused to store it" in text and "QODER_PERSONAL_ACCESS_TOKEN" in text
    assert info.value.__cause__ is None and info.value.__context__ is None
    with pytest.raises(SecretStoreError, match="locked"):
        store.get(SecretName.QODER_TOKEN)


def test_empty_secret_is_refused() -> None:
    with pytest.raises(SecretStoreError, match="empty"):
        _store(MemoryKeyring()).set(SecretName.QODER_TOKEN, "")


def test_environment_fallback_without_a_usable_keyring(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = SecretStore(fail.Keyring())
    assert store.get(SecretName.ANTHROPIC_API_KEY) is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    got = store.get(SecretName.ANTHROPIC_API_KEY)
    assert got is not None and got.source is SecretSource.ENVIRONMENT
    assert got.reveal() == API_KEY
    assert SecretStore(null.Keyring(), environ={"QODER_PERSONAL_ACCESS_TOKEN": TOKEN}).get(
        SecretName.QODER_TOKEN) == SecretValue(TOKEN)


def test_keyring_value_wins_over_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QODER_PERSONAL_ACCESS_TOKEN", "pat_from_env")
    store = _store(MemoryKeyring())
    assert store.get(SecretName.QODER_TOKEN).source is SecretSource.ENVIRONMENT  # type: ignore[union-attr]
    store.set(SecretName.QODER_TOKEN, TOKEN)
    got = store.get(SecretName.QODER_TOKEN)
    assert got is not None and got.source is SecretSource.KEYRING and got.reveal() == TOKEN


def test_secret_value_hides_itself() -> None:
    value = SecretValue(OPAQUE)
    for shown in (repr(value), str(value), f"{value}", f"{value!r:>5}", repr([value]),
                  repr({"k": value})):
        assert OPAQUE not in shown
    assert repr(value) == str(value) == "SecretValue('********')"
    assert value.reveal() == OPAQUE
    assert value == SecretValue(OPAQUE) and value != SecretValue("other")
    assert bool(value) and not SecretValue("")
    with pytest.raises(TypeError):
        pickle.dumps(value)
    with pytest.raises(TypeError):
        hash(value)


def _capture(logger_name: str, redactor: RedactSecrets) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    redactor.install(root)
    logger = logging.getLogger(logger_name)
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_redact_secrets_in_real_log_records() -> None:
    redactor = RedactSecrets()
    root = logging.getLogger()
    old_level = root.level
    logger, stream = _capture("qoder_desktop.test.redact", redactor)
    try:
        store = SecretStore(MemoryKeyring(), extra_allowed=(MemoryKeyring,), redactor=redactor)
        store.set(SecretName.QODER_TOKEN, OPAQUE)  # registered when stored
        logger.info("token is %s and key %r", OPAQUE, {"key": API_KEY})
        logger.warning("literal %s in a message", TOKEN)
        logger.info({"payload": OPAQUE})
        try:
            raise RuntimeError(f"SDK failed with options env={OPAQUE}")
        except RuntimeError:
            logger.exception("starting the agent failed")
        logger.info("bad format %d", "x")  # a broken record is still redacted
        logger.info("compat_mode and pat_ alone are ordinary words: compat_x")
    finally:
        for handler in list(root.handlers):
            if isinstance(handler, logging.StreamHandler) and handler.stream is stream:
                root.removeHandler(handler)
        root.removeFilter(redactor)
        root.setLevel(old_level)
    output = stream.getvalue()
    for secret in (OPAQUE, TOKEN, API_KEY):
        assert secret not in output
    assert "token is ******** and key {'key': '********'}" in output
    assert "literal ******** in a message" in output
    assert "RuntimeError: SDK failed with options env=********" in output
    assert "compat_x" in output


def test_redactor_ignores_tiny_values_and_accepts_secret_values() -> None:
    redactor = RedactSecrets(["ab", SecretValue(OPAQUE)])
    assert redactor.redact("ab cd " + OPAQUE) == "ab cd ********"
