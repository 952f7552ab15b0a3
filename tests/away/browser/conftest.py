"""The desk and the phone of the browser tests (see `helpers.away_browser`).

The desk is the real thing in-process on the app's qasync loop; the phone is Debian's
Chromium driven by Playwright on a thread of its own (`helpers.phone_browser`), trusting
the desk's CA by its SPKI pin as a phone that installed the CA would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from helpers.away_browser import AwayDesk, serving_desk
from helpers.memory_keyring import MemoryKeyring
from helpers.phone_browser import BrowserThread, chromium_or_skip

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.store.database import Database


@pytest.fixture
def chromium(desk: AwayDesk) -> Iterator[BrowserThread]:
    """Playwright on its own thread (the browser is launched by the test, once it knows
    which certificates the phone trusts); closed before the desk stops, as a phone that
    leaves, so the server's shutdown waits for no open socket."""
    chromium_or_skip()
    thread = BrowserThread()
    try:
        yield thread
    finally:
        thread.close()


@pytest_asyncio.fixture
async def desk(db: Database, memory_keyring: MemoryKeyring, app_paths: AppPaths,
               monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[AwayDesk]:
    """Away mode on, serving `https://desk.test:PORT` on loopback, nothing paired yet."""
    secrets = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    async with serving_desk(db, secrets, app_paths.data_dir, monkeypatch,
                            desk_name="test desk", session_name="away demo",
                            cwd="/tmp/away-ws") as rig:
        yield rig
