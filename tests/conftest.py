"""Fixtures every test gets: private folders, a fake HOME and an in-memory keyring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.core
import pytest
from helpers.memory_keyring import MemoryKeyring

from qoder_desktop.config.paths import HOME_ENV, AppPaths
from qoder_desktop.config.settings import Settings
from qoder_desktop.store.database import Database

_SECRET_ENV_VARS = ("QODER_PERSONAL_ACCESS_TOKEN", "ANTHROPIC_API_KEY")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point QODER_DESKTOP_HOME, HOME and the XDG folders at fresh temp folders.

    Nothing a test does can reach the user's real settings, ledger, ~/.claude or
    ~/.qoder; real secrets in the environment are hidden from tests.
    """
    root = tmp_path_factory.mktemp("isolated")
    home = root / "home"
    home.mkdir()
    monkeypatch.setenv(HOME_ENV, str(root / "qoder-desktop"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                     ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache")):
        monkeypatch.setenv(var, str(home / sub))
    for var in _SECRET_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    """Install an in-memory keyring for the test and restore the previous one after."""
    previous = keyring.core._keyring_backend
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.core._keyring_backend = previous


@pytest.fixture
def app_paths() -> AppPaths:
    """The app's folders under the test's QODER_DESKTOP_HOME, created."""
    return AppPaths.default().ensure()


@pytest.fixture
def settings() -> Settings:
    """Fresh default settings."""
    return Settings()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """A fresh database in the test's tmp_path, closed afterwards."""
    database = Database.open(tmp_path / "test.sqlite3")
    try:
        yield database
    finally:
        database.close()
