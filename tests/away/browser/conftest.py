"""The desk and the phone of the browser tests (see `helpers.away_browser`).

The desk is the real thing in-process on the app's qasync loop; the phone is Debian's
Chromium driven by Playwright on a thread of its own (`helpers.phone_browser`), trusting
the desk's CA by its SPKI pin as a phone that installed the CA would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from helpers.away_browser import (
    DESK_HOST,
    SESSION,
    AwayDesk,
    resolve_test_names_to_loopback,
    spki_pin_of,
)
from helpers.broker_events import Recorder
from helpers.memory_keyring import MemoryKeyring
from helpers.phone_browser import BrowserThread, chromium_or_skip

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.away.authority import DeskAuthority
from qoder_desktop.away.devices import DeviceRegistry
from qoder_desktop.away.mode import AwayMode
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.domain.models import Backend, SessionInfo
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


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
    db.upsert_session(SessionInfo(session_id=SESSION, name="away demo", backend=Backend.CLAUDE,
                                  cwd="/tmp/away-ws"))
    secrets = SecretStore(memory_keyring, extra_allowed=(MemoryKeyring,))
    broker = ApprovalBroker(db, Ledger(db))
    recorder = Recorder(broker)
    devices = DeviceRegistry(db, secrets)
    await devices.load()

    async def load_authority() -> DeskAuthority:
        return await DeskAuthority.load_or_create(secrets, app_paths.data_dir)

    resolve_test_names_to_loopback(monkeypatch)
    mode = AwayMode(broker, devices, load_authority, desk_name="test desk")
    await mode.start(DESK_HOST, 0, time_limit_s=None)  # a free port (and the next one)
    assert mode.port is not None
    authority = await load_authority()
    rig = AwayDesk(db, broker, devices, mode, mode.port, spki_pin_of(authority.ca_pem),
                   recorder)
    try:
        yield rig
    finally:
        for task in rig.asked.values():
            task.cancel()
        await mode.stop("the test ended")
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*rig.asked.values(), return_exceptions=True)
        broker.close()
