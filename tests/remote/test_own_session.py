"""A person who keeps their own SSH session to the host: `remote forward HOST --own`
gives the line for it, the app keeps no tunnel and says so, and the hook on the host
reaches the desk through the person's session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.remote_desk import Desk
from helpers.remote_hook import finish_hook, permission_event, start_hook

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.remote.serving import RemoteHooks, registered_endpoints
from qoder_desktop.store.database import Database

TIMEOUT = 30.0


def _forward_line(output: str) -> str:
    return next(line.strip() for line in output.splitlines()
                if line.strip().startswith("RemoteForward "))


@pytest_asyncio.fixture
async def own(desk: Desk, db: Database, capsys: pytest.CaptureFixture[str]
              ) -> AsyncIterator[tuple[RemoteHooks, ApprovalBroker, str,
                                       asyncio.Queue[ApprovalRequest]]]:
    """The rig's host added, then set to the person's own session; the desk serving it."""
    assert desk.remote("add", desk.host.alias) == 0
    capsys.readouterr()
    assert desk.remote("forward", desk.host.alias, "--own") == 0
    output = capsys.readouterr().out
    endpoints, problems = registered_endpoints(desk.registry, desk.store)
    assert problems == []
    _ledger, broker, hub = app_side(db)
    added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    finished: asyncio.Queue[Finished] = asyncio.Queue()
    route_broker_events(broker, added, finished)
    remote = RemoteHooks(broker, hub)
    assert await remote.start(endpoints) == []
    try:
        yield remote, broker, output, added
    finally:
        await remote.stop()


@pytest.mark.asyncio
async def test_the_app_keeps_no_tunnel_and_says_the_persons_session_forwards(
        desk: Desk, own: tuple[RemoteHooks, ApprovalBroker, str, asyncio.Queue[ApprovalRequest]]
        ) -> None:
    remote, _broker, output, _added = own

    assert remote.tunnels == {}
    assert [s.describe() for s in remote.statuses()] == [
        f"{desk.host.alias}: forwarded by your own SSH session"]
    assert "forwarded by your own SSH session (the app keeps no tunnel" in output
    assert _forward_line(output).startswith(
        f"RemoteForward {desk.host.user.home}/.qoder-desktop/desk.sock ")


@pytest.mark.asyncio
async def test_the_hook_reaches_the_desk_through_the_persons_own_session(
        desk: Desk, own: tuple[RemoteHooks, ApprovalBroker, str, asyncio.Queue[ApprovalRequest]]
        ) -> None:
    _remote, broker, output, added = own
    _keyword, remote_socket, local_socket = _forward_line(output).split()
    session = await asyncio.create_subprocess_exec(
        *desk.host.prefix, "-N", "-o", "ExitOnForwardFailure=yes", "-o",
        f"RemoteForward={remote_socket} {local_socket}", desk.host.alias,
        stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    settings = desk.host.user.home / ".claude" / "settings.json"
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["PermissionRequest"]
    command = str(groups[0]["hooks"][0]["command"])
    try:
        async with asyncio.timeout(TIMEOUT):
            while not (desk.host.user.home / ".qoder-desktop" / "desk.sock").is_socket():
                assert session.returncode is None
                await asyncio.sleep(0.05)
        hook = await start_hook(desk.host.ssh(command), permission_event("mine", "make"))
        request = await asyncio.wait_for(added.get(), TIMEOUT)
        broker.answer(request.request_id, Decision.deny("through my session"))
        run = await finish_hook(hook)
    finally:
        if session.returncode is None:
            session.terminate()
        await session.wait()

    assert request.host == desk.host.alias
    assert run.decision == {"behavior": "deny", "message": "through my session"}


def test_forward_without_a_flag_changes_nothing(desk: Desk,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert desk.remote("add", desk.host.alias) == 0
    capsys.readouterr()

    assert desk.remote("forward", desk.host.alias) == 0
    output = capsys.readouterr().out

    assert "forwarded by the app's ssh tunnel" in output
    assert f"remote forward {desk.host.alias} --own" in output
    host = desk.registry.get(desk.host.alias)
    assert host is not None and not host.own_session

