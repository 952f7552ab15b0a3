"""Fixtures every test gets: private folders, a fake HOME, an in-memory keyring, and the
app's own event loop (`AppEventLoop`, qasync) under every async test."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import sys
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import keyring
import keyring.core
import pytest
from helpers.memory_keyring import MemoryKeyring
from helpers.safety_skips import ci_failure, in_ci, must_not_skip
from hypothesis import settings as hypothesis_settings

from qoder_desktop.config.paths import HOME_ENV, AppPaths
from qoder_desktop.config.settings import Settings
from qoder_desktop.store.database import Database

# Tests never assert wall-clock times: Hypothesis' per-example deadline is one, and it
# fails property tests on a loaded machine. Examples stay bounded by `max_examples`.
hypothesis_settings.register_profile("no-deadline", deadline=None)
hypothesis_settings.load_profile("no-deadline")

if TYPE_CHECKING:
    from qoder_desktop.scripted_model.server import ThreadedScriptedModel

_SECRET_ENV_VARS = ("QODER_PERSONAL_ACCESS_TOKEN", "ANTHROPIC_API_KEY")


def app_event_loop() -> asyncio.AbstractEventLoop:
    """A new `AppEventLoop` (the loop `run_gui` runs) on the one QApplication of the run.

    The QApplication is made here when no test asked for pytest-qt's `qapp` yet; `qapp`
    then returns the same instance.
    """
    from PySide6.QtWidgets import QApplication

    from qoder_desktop.ui.event_loop import AppEventLoop

    app = QApplication.instance() or QApplication([sys.argv[0]])
    return AppEventLoop(app)  # type: ignore[no-any-return]


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item
                                  ) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Every async test and fixture runs on the app's loop, not on plain asyncio.

    The SDK clients, the gateway and the in-process scripted model all run on that loop
    in the app; a defect of the loop (qasync) must fail the tests, not only the app.
    """
    return {"app_loop": app_event_loop}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """In CI, a safety test that skips fails instead, naming why it skipped (see
    `helpers.safety_skips`)."""
    report: pytest.TestReport = yield
    if report.skipped and in_ci() and must_not_skip(item.nodeid) and not hasattr(
            report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(
            report.longrepr)
        report.outcome = "failed"
        report.longrepr = ci_failure(reason)
    return report


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point QODER_DESKTOP_HOME, HOME and the XDG folders at fresh temp folders.

    Nothing a test does can reach the user's real settings, ledger, ~/.claude or
    ~/.qoder; real secrets in the environment are hidden from tests.
    """
    root = tmp_path_factory.mktemp("h")  # (short: Unix socket paths under it must fit)
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


@pytest.fixture(scope="session")
def scripted_model() -> Iterator[ThreadedScriptedModel]:
    """One scripted model (loopback) for the whole run, shared by the e2e, gateway,
    terminal and desktop rigs; tests tell their records apart by session."""
    from qoder_desktop.scripted_model.server import ThreadedScriptedModel

    with ThreadedScriptedModel() as model:
        yield model
