"""Two hosts over real tunnels: a request is its host's by the socket it came in on,
even when it names a session of the other host."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.remote_desk import Desk
from helpers.remote_hook import finish_hook, permission_event, start_hook
from helpers.remote_user import RemoteUser
from helpers.sshd import HOST_ALIAS, SshHost

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.remote.commands import remote_main
from qoder_desktop.remote.serving import RemoteHooks, registered_endpoints
from qoder_desktop.remote.tunnel import TunnelState
from qoder_desktop.store.database import Database

TIMEOUT = 30.0
OTHER_ALIAS = "qd-other"


@pytest.fixture
def other_host(ssh_host: SshHost, remote_homes: Path, tmp_path: Path) -> Iterator[SshHost]:
    """A second account on the same server, reached by an alias of its own."""
    server = ssh_host.server
    user = RemoteUser.create(remote_homes, server.client_key.with_suffix(".pub").read_text())
    folder = tmp_path / "other-client"
    folder.mkdir()
    try:
        host = SshHost.write_config(folder, server, user)
        host.config.write_text(host.config.read_text().replace(
            f"Host {HOST_ALIAS}\n", f"Host {OTHER_ALIAS}\n"))
        host.alias = OTHER_ALIAS
        yield host
    finally:
        user.delete()


def _hook(host: SshHost) -> list[str]:
    settings = host.user.home / ".claude" / "settings.json"
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["PermissionRequest"]
    return host.ssh(str(groups[0]["hooks"][0]["command"]))


@pytest_asyncio.fixture
async def served(desk: Desk, other_host: SshHost, db: Database
                 ) -> AsyncIterator[tuple[ApprovalBroker, asyncio.Queue[ApprovalRequest],
                                          RemoteHooks]]:
    assert desk.remote("add", desk.host.alias, "--agent", "claude") == 0
    assert remote_main(["add", OTHER_ALIAS, "--agent", "claude", "--ssh-config",
                        str(other_host.config)], store=desk.store, registry=desk.registry) == 0
    endpoints, problems = registered_endpoints(desk.registry, desk.store)
    assert problems == [] and len(endpoints) == 2
    _ledger, broker, hub = app_side(db)
    requests: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    finished: asyncio.Queue[Finished] = asyncio.Queue()
    route_broker_events(broker, requests, finished)
    changed = asyncio.Event()
    remote = RemoteHooks(broker, hub, on_status=lambda _status: changed.set())
    assert await remote.start(endpoints) == []
    try:
        async with asyncio.timeout(TIMEOUT):
            while any(t.status.state is not TunnelState.CONNECTED
                      for t in remote.tunnels.values()):
                changed.clear()
                await changed.wait()
        yield broker, requests, remote
    finally:
        await remote.stop()


@pytest.mark.asyncio
async def test_a_host_naming_the_other_hosts_session_is_shown_as_itself(
        desk: Desk, other_host: SshHost,
        served: tuple[ApprovalBroker, asyncio.Queue[ApprovalRequest], RemoteHooks]) -> None:
    broker, requests, _remote = served
    first = await start_hook(_hook(desk.host), permission_event("shared-id", "ls one"))
    from_one = await asyncio.wait_for(requests.get(), TIMEOUT)
    second = await start_hook(_hook(other_host), permission_event("shared-id", "ls two"))
    from_two = await asyncio.wait_for(requests.get(), TIMEOUT)
    broker.answer(from_two.request_id, Decision.deny("not you"))
    broker.answer(from_one.request_id, Decision.allow_once(dict(from_one.tool_input)))
    run_one, run_two = await finish_hook(first), await finish_hook(second)

    assert (from_one.host, from_two.host) == (desk.host.alias, OTHER_ALIAS)
    assert from_one.session_id != from_two.session_id
    assert from_two.session_name.startswith(f"{OTHER_ALIAS} · ")
    assert run_one.decision is not None and run_one.decision["behavior"] == "allow"
    assert run_two.decision == {"behavior": "deny", "message": "not you"}
