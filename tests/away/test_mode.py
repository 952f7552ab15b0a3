"""Away mode on and off: clear sentences when it cannot start, an idempotent stop, the
time limit, connected phones in the status, and nothing left running after it stops."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import pytest
from helpers.away_devices import away_secrets, device_registry
from helpers.away_rig import HOST, AwayRig, away_rig, pair, phone_socket
from helpers.loop import settle
from helpers.phone import Phone

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.away.authority import AuthorityUnavailable, DeskAuthority
from qoder_desktop.away.mode import TIME_LIMIT_REACHED, AwayError, AwayMode, AwayStatus
from qoder_desktop.away.pairing import PairingRefused
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


async def _mode(db: Database, tmp_path: Path) -> AwayMode:
    authority = await DeskAuthority.load_or_create(away_secrets(), tmp_path)

    async def load() -> DeskAuthority:
        return authority

    ledger = Ledger(db)
    return AwayMode(ApprovalBroker(db, ledger), await device_registry(db), load,
                    desk_name="test desk")


@pytest.mark.asyncio
async def test_a_port_in_use_is_said_plainly(db: Database, tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind((HOST, 0))
    taken.listen()
    try:
        mode = await _mode(db, tmp_path)
        with pytest.raises(AwayError, match="already in use"):
            await mode.start(HOST, taken.getsockname()[1])
    finally:
        taken.close()
    assert mode.status.on is False


@pytest.mark.asyncio
async def test_an_address_not_on_this_computer(db: Database, tmp_path: Path) -> None:
    mode = await _mode(db, tmp_path)
    with pytest.raises(AwayError, match="not an address of this computer"):
        await mode.start("10.254.253.252", 0)


@pytest.mark.asyncio
async def test_a_public_address_is_refused(db: Database, tmp_path: Path) -> None:
    mode = await _mode(db, tmp_path)
    with pytest.raises(AwayError, match="private or local address"):
        await mode.start("8.8.8.8", 0)


@pytest.mark.asyncio
async def test_no_keyring_is_said_plainly(db: Database) -> None:
    async def no_keyring() -> DeskAuthority:
        raise AuthorityUnavailable("No trusted keyring is available, so Away mode cannot "
                                   "keep its certificate key.")

    ledger = Ledger(db)
    mode = AwayMode(ApprovalBroker(db, ledger), await device_registry(db), no_keyring,
                    desk_name="test desk")
    with pytest.raises(AwayError, match="No trusted keyring"):
        await mode.start(HOST, 0)


@pytest.mark.asyncio
async def test_on_then_off_leaves_nothing_running(db: Database, tmp_path: Path) -> None:
    before = asyncio.all_tasks()
    mode = await _mode(db, tmp_path)
    seen: list[AwayStatus] = []
    mode.subscribe(seen.append)
    status = await mode.start(HOST, 0, time_limit_s=60)
    assert status.on and status.url == f"https://{HOST}:{mode.port}"
    assert status.ends_at is not None and status.fingerprint
    port = mode.port
    await mode.stop("you are back")
    await mode.stop("again")  # idempotent
    assert [s.on for s in seen] == [True, False]
    assert mode.status.why_off == "you are back"
    assert asyncio.all_tasks() - before == set()
    with socket.socket() as probe:
        assert probe.connect_ex((HOST, port)) != 0  # nobody listens any more


@pytest.mark.asyncio
async def test_the_time_limit_turns_it_off(db: Database, tmp_path: Path) -> None:
    mode = await _mode(db, tmp_path)
    await mode.start(HOST, 0, time_limit_s=0.2)
    await settle(lambda: not mode.status.on)
    assert mode.status.why_off == TIME_LIMIT_REACHED


@pytest.mark.asyncio
async def test_stop_closes_the_phones_and_the_status_counts_them(db: Database,
                                                                 tmp_path: Path) -> None:
    before = asyncio.all_tasks()
    async with away_rig(db, tmp_path) as rig:
        await _phones_come_and_go(rig)
    assert asyncio.all_tasks() - before == set()


async def _phones_come_and_go(rig: AwayRig) -> None:
    phone = Phone()
    await pair(rig, phone)
    counts: list[int] = []
    rig.mode.subscribe(lambda status: counts.append(status.phones))
    offer = rig.mode.pairings.offer(rig.origin)
    async with phone_socket(rig, phone) as client:
        await client.sign_in()
        await settle(lambda: rig.mode.status.phones == 1)
        await rig.mode.stop("you are back")
        assert await client.closed_with() in (1001, 1012)
    assert rig.mode.status.phones == 0 and counts[0] == 1 and counts[-1] == 0
    assert rig.mode.pairings.pending() is None
    with pytest.raises(PairingRefused, match="unknown or was already used"):
        rig.mode.pairings.claim(offer.token, Phone().spki, "late")  # the offer ended too


@pytest.mark.asyncio
async def test_it_can_be_turned_on_again(db: Database, tmp_path: Path) -> None:
    mode = await _mode(db, tmp_path)
    await mode.start(HOST, 0, time_limit_s=None)
    with pytest.raises(AwayError, match="already on"):
        await mode.start(HOST, 0)
    await mode.stop("off")
    await mode.start(HOST, 0, time_limit_s=None)
    assert mode.status.on and mode.status.ends_at is None
    await mode.stop("off")


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{record.name}: {record.getMessage()}" for record in caplog.records
            if record.levelno >= logging.ERROR]


@pytest.mark.asyncio
async def test_off_with_a_phone_connected_logs_no_error_and_leaves_nothing(
        db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A phone's page keeps its HTTPS connection open between requests (a browser does
    not answer the desk's TLS goodbye on such an idle connection); turning Away mode off
    still says goodbye to the phone, ends at once and logs nothing alarming."""
    before = asyncio.all_tasks()
    async with away_rig(db, tmp_path) as rig, rig.http() as idle_page:
        assert (await idle_page.get("/")).status_code == 200  # kept alive, idle
        phone = Phone()
        await pair(rig, phone)
        async with phone_socket(rig, phone) as client:
            await client.sign_in()
            await settle(lambda: rig.mode.status.phones == 1)
            await rig.mode.stop("you are back")
            assert await client.closed_with() == 1001  # going away, said before the end
    assert asyncio.all_tasks() - before == set()
    assert _errors(caplog) == []


@pytest.mark.asyncio
async def test_off_right_after_a_phone_hung_up_logs_no_error_and_leaves_nothing(
        db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The phone's page closed its socket and its phone went quiet before the goodbye
    finished (the desk's side of that socket is still closing) when Away mode turns
    off."""
    before = asyncio.all_tasks()
    async with away_rig(db, tmp_path) as rig:
        phone = Phone()
        await pair(rig, phone)
        async with phone_socket(rig, phone) as client:
            await client.sign_in()
            await settle(lambda: rig.mode.status.phones == 1)
            transport = client.connection.transport
            transport.pause_reading()  # the phone sleeps right after it hangs up
            hanging_up = asyncio.ensure_future(client.connection.close(1001))
            await settle(lambda: rig.mode.status.phones == 0)  # the desk saw it go
            await rig.mode.stop("you are back")
            transport.abort()
            await hanging_up
    assert asyncio.all_tasks() - before == set()
    assert _errors(caplog) == []
