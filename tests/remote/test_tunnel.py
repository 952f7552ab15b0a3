"""The tunnel with real OpenSSH: after ``remote add``, the hook command the agents'
settings on the host run (as the remote user) reaches the desk over ``ssh -N -R`` and
gets the person's answer; it steps aside when the tunnel or the server is gone while the
desk shows reconnecting, and the desk reconnects by itself when the server is back."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.remote_desk import Desk
from helpers.remote_hook import finish_hook, permission_event, start_hook
from helpers.sshd import SshHost

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.remote.serving import RemoteHooks, registered_endpoints
from qoder_desktop.remote.tunnel import Tunnel, TunnelSettings, TunnelState, TunnelStatus
from qoder_desktop.store.database import Database

TIMEOUT = 30.0


def installed_command(host: SshHost) -> str:
    """The hook command `remote add` wrote into Claude Code's settings on the host."""
    settings = host.user.home / ".claude" / "settings.json"
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["PermissionRequest"]
    return str(groups[0]["hooks"][0]["command"])


@dataclass
class TunnelDesk:
    """The desk serving the rig's host over a tunnel it keeps."""

    added: Desk
    broker: ApprovalBroker
    remote: RemoteHooks = field(init=False)
    statuses: list[TunnelStatus] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    requests: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[Finished] = field(default_factory=asyncio.Queue)

    @property
    def host(self) -> SshHost:
        return self.added.host

    @property
    def tunnel(self) -> Tunnel:
        return self.remote.tunnels[self.host.alias]

    def on_status(self, status: TunnelStatus) -> None:
        self.statuses.append(status)
        self.changed.set()

    async def reach(self, state: TunnelState) -> TunnelStatus:
        """Wait until the host's tunnel is in `state`."""
        async with asyncio.timeout(TIMEOUT):
            while self.tunnel.status.state is not state:
                self.changed.clear()
                await self.changed.wait()
        return self.tunnel.status

    async def next_request(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.requests.get(), TIMEOUT)

    async def remote_hook(self, session: str, command: str) -> asyncio.subprocess.Process:
        """The installed hook command run on the host as its user, through ssh."""
        return await start_hook(self.host.ssh(installed_command(self.host)),
                                permission_event(session, command))

    async def hook_as_remote_user(self, session: str) -> asyncio.subprocess.Process:
        """The installed hook command run as the remote user without ssh (the server may
        be down)."""
        argv = ["runuser", "-u", self.host.user.name, "--", "sh", "-c",
                installed_command(self.host)]
        return await start_hook(argv, permission_event(session, "ls"))


async def _serve(added: Desk, db: Database, settings: TunnelSettings | None = None, *,
                 already_added: bool = False) -> TunnelDesk:
    if not already_added:
        assert added.remote("add", added.host.alias) == 0
    endpoints, problems = registered_endpoints(added.registry, added.store)
    assert problems == []
    _ledger, broker, hub = app_side(db)
    served = TunnelDesk(added, broker)
    served.remote = RemoteHooks(broker, hub, on_status=served.on_status,
                                tunnel_settings=settings)
    route_broker_events(broker, served.requests, served.finished)
    assert await served.remote.start(endpoints) == []
    return served


@pytest_asyncio.fixture
async def tunnel_desk(desk: Desk, db: Database) -> AsyncIterator[TunnelDesk]:
    """The desk after `remote add`, keeping the host's tunnel."""
    served = await _serve(desk, db)
    try:
        yield served
    finally:
        await served.remote.stop()


@pytest_asyncio.fixture
async def slow_retry_desk(desk: Desk, db: Database) -> AsyncIterator[TunnelDesk]:
    """A desk whose tunnel waits long before it tries again (so a test sees it down)."""
    served = await _serve(desk, db, TunnelSettings(first_delay=60, max_delay=60))
    try:
        yield served
    finally:
        await served.remote.stop()


@pytest.mark.asyncio
async def test_a_hook_on_the_host_asks_at_the_desk_and_gets_the_answer(
        tunnel_desk: TunnelDesk) -> None:
    desk = tunnel_desk
    await desk.reach(TunnelState.CONNECTED)
    hook = await desk.remote_hook("remote-1", "make deploy")

    request = await desk.next_request()
    desk.broker.answer(request.request_id, Decision.deny("not from the box"))
    run = await finish_hook(hook)

    assert request.host == desk.host.alias and request.tool_input == {"command": "make deploy"}
    assert run.returncode == 0
    assert run.decision == {"behavior": "deny", "message": "not from the box"}
    assert desk.tunnel.status.describe() == f"{desk.host.alias}: connected"


@pytest.mark.asyncio
async def test_an_allow_at_the_desk_reaches_the_host(tunnel_desk: TunnelDesk) -> None:
    desk = tunnel_desk
    await desk.reach(TunnelState.CONNECTED)
    hook = await desk.remote_hook("remote-2", "ls")

    request = await desk.next_request()
    desk.broker.answer(request.request_id, Decision.allow_once({"command": "ls -la"}))
    run = await finish_hook(hook)

    assert run.decision == {"behavior": "allow", "updatedInput": {"command": "ls -la"}}


@pytest.mark.asyncio
async def test_a_killed_tunnel_makes_the_hook_step_aside_and_shows_reconnecting(
        slow_retry_desk: TunnelDesk) -> None:
    desk = slow_retry_desk
    await desk.reach(TunnelState.CONNECTED)
    pid = desk.tunnel.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)

    status = await desk.reach(TunnelState.RECONNECTING)
    run = await finish_hook(await desk.remote_hook("remote-3", "ls"))

    assert status.describe().startswith(f"{desk.host.alias}: reconnecting — ")
    assert (run.returncode, run.stdout) == (0, "")
    assert desk.requests.empty()


@pytest.mark.asyncio
async def test_a_stopped_server_shows_unreachable_and_a_restart_reconnects_by_itself(
        tunnel_desk: TunnelDesk) -> None:
    desk = tunnel_desk
    await desk.reach(TunnelState.CONNECTED)
    desk.host.server.stop()

    await desk.reach(TunnelState.RECONNECTING)
    run = await finish_hook(await desk.hook_as_remote_user("remote-4"))
    while "unreachable" not in desk.tunnel.status.reason:
        desk.changed.clear()
        await asyncio.wait_for(desk.changed.wait(), TIMEOUT)
    desk.host.server.start()
    await desk.reach(TunnelState.CONNECTED)
    hook = await desk.remote_hook("remote-5", "ls")
    request = await desk.next_request()
    desk.broker.answer(request.request_id, Decision.deny("still here"))
    back = await finish_hook(hook)

    assert (run.returncode, run.stdout) == (0, "")
    assert desk.tunnel.status.describe() == f"{desk.host.alias}: connected"
    alias = desk.host.alias
    *_before, dropped, refused, again = [s.describe() for s in desk.statuses]
    assert dropped.startswith(f"{alias}: reconnecting — connection ")  # closed, or lost
    assert refused == f"{alias}: reconnecting — host unreachable (connection refused)"
    assert again == f"{alias}: connected"
    assert back.decision == {"behavior": "deny", "message": "still here"}


@pytest.mark.asyncio
async def test_stopping_the_desk_ends_the_tunnel(tunnel_desk: TunnelDesk) -> None:
    desk = tunnel_desk
    await desk.reach(TunnelState.CONNECTED)
    pid = desk.tunnel.pid
    assert pid is not None

    await desk.remote.stop()

    assert not Path(f"/proc/{pid}").exists()


CHILD = """\
import asyncio, sys
from pathlib import Path
from qoder_desktop.remote.tunnel import Tunnel, TunnelState
async def main():
    def said(status):
        if status.state is TunnelState.CONNECTED:
            print(tunnel.pid, flush=True)
    tunnel = Tunnel("box", sys.argv[1], Path(sys.argv[2]), on_status=said,
                    ssh_config=Path(sys.argv[3]))
    tunnel.start()
    await asyncio.sleep(3600)
asyncio.run(main())
"""


@pytest.mark.asyncio
async def test_the_tunnel_dies_with_the_app_even_when_the_app_is_killed(
        ssh_host: SshHost, tmp_path: Path) -> None:
    app = subprocess.Popen([sys.executable, "-c", CHILD, ssh_host.alias,
                            str(tmp_path / "desk.sock"), str(ssh_host.config)],
                           stdout=subprocess.PIPE, text=True)
    try:
        assert app.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(app.stdout.readline), TIMEOUT)
        ssh_pid = int(line)
        app.kill()
        app.wait(TIMEOUT)
        async with asyncio.timeout(TIMEOUT):
            while _alive(ssh_pid):
                await asyncio.sleep(0.02)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stream:
            return stream.read().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.asyncio
async def test_remote_status_shows_the_running_apps_tunnel(
        tunnel_desk: TunnelDesk, capsys: pytest.CaptureFixture[str]) -> None:
    desk = tunnel_desk
    await desk.reach(TunnelState.CONNECTED)
    capsys.readouterr()

    await asyncio.to_thread(desk.added.remote, "status")
    while_running = capsys.readouterr().out
    await desk.remote.stop()
    await asyncio.to_thread(desk.added.remote, "status")
    after = capsys.readouterr().out

    assert "tunnel: connected" in while_running
    assert "tunnel: not running (the app is closed)" in after


@pytest.mark.asyncio
async def test_a_host_whose_private_folder_is_gone_says_so_and_is_not_written_to(
        desk: Desk, db: Database) -> None:
    assert desk.remote("add", desk.host.alias) == 0
    folder = desk.host.user.home / ".qoder-desktop"
    removed = desk.host.run(f"rm -rf {folder}")
    assert removed.returncode == 0, removed.stderr
    served = await _serve(desk, db, already_added=True)
    try:
        async with asyncio.timeout(TIMEOUT):
            while "could not be made" not in served.tunnel.status.reason:
                served.changed.clear()
                await served.changed.wait()
    finally:
        await served.remote.stop()

    assert served.statuses[-2].describe() == (
        f"{desk.host.alias}: reconnecting — the remote socket could not be made (run "
        "`qoder-desktop remote add` again)")
    assert not folder.exists()
