"""The tunnel with real OpenSSH: a hook run as the remote user reaches the desk over
``ssh -N -R``, falls through when the tunnel or the server is gone, and the desk
reconnects by itself when the server is back."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.broker_events import Finished, route_broker_events
from helpers.remote_hook import (
    RUNNER,
    SOURCES,
    finish_hook,
    permission_event,
    start_hook,
)
from helpers.sshd import SshHost

import qoder_desktop
from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.remote.serving import RemoteEndpoint, RemoteHooks
from qoder_desktop.remote.tunnel import TunnelSettings, TunnelState, TunnelStatus
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

TIMEOUT = 30.0
HOST = "box"
HOOK = "~/.qoder-desktop/hook/hook.py ~/.qoder-desktop/desk.sock ~/.qoder-desktop/desk.token"


def deploy_test_hook(host: SshHost, token: str) -> None:
    """The hook and the host's token in the remote user's private folder (as the user)."""
    package = Path(qoder_desktop.__file__).parent
    for name in SOURCES:
        host.user.write(f".qoder-desktop/hook/lib/qoder_desktop/{name}",
                        (package / name).read_text(encoding="utf-8"))
    host.user.write(".qoder-desktop/hook/hook.py", RUNNER)
    host.user.write(".qoder-desktop/desk.token", token + "\n")
    os.chmod(host.user.home / ".qoder-desktop", 0o700)


@dataclass
class TunnelDesk:
    """The desk serving one host over a tunnel it keeps."""

    host: SshHost
    broker: ApprovalBroker
    remote: RemoteHooks
    statuses: list[TunnelStatus] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    added: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[Finished] = field(default_factory=asyncio.Queue)

    def on_status(self, status: TunnelStatus) -> None:
        self.statuses.append(status)
        self.changed.set()

    async def reach(self, state: TunnelState) -> TunnelStatus:
        """Wait until the host's tunnel is in `state`."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                status = self.remote.tunnels[HOST].status
                if status.state is state:
                    return status
                self.changed.clear()
                await self.changed.wait()

    async def remote_hook(self, session: str, command: str) -> asyncio.subprocess.Process:
        """The hook run on the host as its user, through ssh, for a Bash call."""
        return await start_hook(self.host.ssh(f"python3 {HOOK}"),
                                permission_event(session, command))

    async def hook_as_remote_user(self, session: str) -> asyncio.subprocess.Process:
        """The deployed hook run as the remote user without ssh (the server may be down)."""
        home = self.host.user.home / ".qoder-desktop"
        argv = ["runuser", "-u", self.host.user.name, "--", "python3", "-I",
                str(home / "hook" / "hook.py"), str(home / "desk.sock"),
                str(home / "desk.token")]
        return await start_hook(argv, permission_event(session, "ls"))


async def _desk(host: SshHost, db: Database,
                settings: TunnelSettings | None = None) -> TunnelDesk:
    token = secrets.token_urlsafe(32)
    deploy_test_hook(host, token)
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, lambda *args: None)  # type: ignore[arg-type,return-value]
    desk = TunnelDesk(host, broker, None)  # type: ignore[arg-type]
    desk.remote = RemoteHooks(broker, hub, on_status=desk.on_status, tunnel_settings=settings)
    route_broker_events(broker, desk.added, desk.finished)
    assert await desk.remote.start([RemoteEndpoint(HOST, host.alias, token,
                                                   ssh_config=host.config)]) == []
    return desk


@pytest_asyncio.fixture
async def desk(ssh_host: SshHost, db: Database) -> AsyncIterator[TunnelDesk]:
    desk = await _desk(ssh_host, db)
    try:
        yield desk
    finally:
        await desk.remote.stop()


@pytest_asyncio.fixture
async def slow_retry_desk(ssh_host: SshHost, db: Database) -> AsyncIterator[TunnelDesk]:
    """A desk whose tunnel waits long before it tries again (so a test sees it down)."""
    desk = await _desk(ssh_host, db, TunnelSettings(first_delay=60, max_delay=60))
    try:
        yield desk
    finally:
        await desk.remote.stop()


@pytest.mark.asyncio
async def test_a_hook_on_the_host_asks_at_the_desk_and_gets_the_answer(
        desk: TunnelDesk) -> None:
    await desk.reach(TunnelState.CONNECTED)
    hook = await desk.remote_hook("remote-1", "make deploy")

    request = await asyncio.wait_for(desk.added.get(), TIMEOUT)
    desk.broker.answer(request.request_id, Decision.deny("not from the box"))
    run = await finish_hook(hook)

    assert request.host == HOST and request.tool_input == {"command": "make deploy"}
    assert run.returncode == 0
    assert run.decision == {"behavior": "deny", "message": "not from the box"}
    assert desk.remote.tunnels[HOST].status.describe() == f"{HOST}: connected"


@pytest.mark.asyncio
async def test_an_allow_at_the_desk_reaches_the_host(desk: TunnelDesk) -> None:
    await desk.reach(TunnelState.CONNECTED)
    hook = await desk.remote_hook("remote-2", "ls")

    request = await asyncio.wait_for(desk.added.get(), TIMEOUT)
    desk.broker.answer(request.request_id, Decision.allow_once({"command": "ls -la"}))
    run = await finish_hook(hook)

    assert run.decision == {"behavior": "allow", "updatedInput": {"command": "ls -la"}}


@pytest.mark.asyncio
async def test_a_killed_tunnel_makes_the_hook_step_aside_and_shows_reconnecting(
        slow_retry_desk: TunnelDesk) -> None:
    desk = slow_retry_desk
    await desk.reach(TunnelState.CONNECTED)
    pid = desk.remote.tunnels[HOST].pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)

    status = await desk.reach(TunnelState.RECONNECTING)
    run = await finish_hook(await desk.remote_hook("remote-3", "ls"))

    assert status.describe().startswith(f"{HOST}: reconnecting — ")
    assert (run.returncode, run.stdout) == (0, "")
    assert desk.added.empty()


@pytest.mark.asyncio
async def test_a_stopped_server_shows_unreachable_and_a_restart_reconnects_by_itself(
        desk: TunnelDesk) -> None:
    await desk.reach(TunnelState.CONNECTED)
    desk.host.server.stop()

    await desk.reach(TunnelState.RECONNECTING)
    run = await finish_hook(await desk.hook_as_remote_user("remote-4"))
    while "unreachable" not in desk.remote.tunnels[HOST].status.reason:
        desk.changed.clear()
        await asyncio.wait_for(desk.changed.wait(), TIMEOUT)
    desk.host.server.start()
    await desk.reach(TunnelState.CONNECTED)
    hook = await desk.remote_hook("remote-5", "ls")
    request = await asyncio.wait_for(desk.added.get(), TIMEOUT)
    desk.broker.answer(request.request_id, Decision.deny("still here"))
    back = await finish_hook(hook)

    assert (run.returncode, run.stdout) == (0, "")
    assert desk.remote.tunnels[HOST].status.describe() == f"{HOST}: connected"
    assert any(s.describe() == f"{HOST}: reconnecting — host unreachable (connection refused)"
               for s in desk.statuses)
    assert back.decision == {"behavior": "deny", "message": "still here"}


@pytest.mark.asyncio
async def test_stopping_the_desk_ends_the_tunnel(desk: TunnelDesk) -> None:
    await desk.reach(TunnelState.CONNECTED)
    pid = desk.remote.tunnels[HOST].pid
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
