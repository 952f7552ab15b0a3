"""Each remote host is its own way in: its own socket and token on the desk, its requests
known as that host's by the socket they arrive on, whatever session they claim."""

from __future__ import annotations

import asyncio
import secrets
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.remote_hook import finish_hook, permission_event, standalone_hook, start_hook

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.remote.serving import RemoteEndpoint, RemoteHooks
from qoder_desktop.remote.tunnel_state import host_socket_path
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import ledger_entries
from qoder_desktop.terminal import protocol
from qoder_desktop.terminal.server import TerminalHookServer

TIMEOUT = 30.0


@dataclass
class Desk:
    """The local hook server and two hosts served on their own sockets."""

    broker: ApprovalBroker
    hub: SessionHub
    db: Database
    local: TerminalHookServer
    remote: RemoteHooks
    folder: Path
    tokens: dict[str, str]
    added: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[Finished] = field(default_factory=asyncio.Queue)

    def hook(self, host: str | None, *, token_of: str | None = None) -> list[str]:
        """The standalone hook at `host`'s socket (None: this machine's) holding
        `token_of`'s token (by default its own)."""
        socket = self.local.socket_path if host is None else host_socket_path(host)
        owner = host if token_of is None else token_of
        token = (protocol.token_path().read_text(encoding="utf-8").strip() if owner is None
                 else self.tokens[owner])
        return standalone_hook(self.folder / f"{host}-{owner}", socket, token)

    async def next_request(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.added.get(), TIMEOUT)


@pytest_asyncio.fixture
async def desk(tmp_path: Path, db: Database) -> AsyncIterator[Desk]:
    _ledger, broker, hub = app_side(db)
    local = TerminalHookServer(broker, hub, follow_transcripts=False)
    remote = RemoteHooks(broker, hub, bindings=local.bindings)
    tokens = {}
    endpoints = []
    for name in ("box-a", "box-b"):
        tokens[name] = secrets.token_urlsafe(32)
        endpoints.append(RemoteEndpoint(name, f"me@{name}", tokens[name], own_session=True))
    desk = Desk(broker, hub, db, local, remote, tmp_path / "hooks", tokens)
    route_broker_events(broker, desk.added, desk.finished)
    await local.start()
    assert await remote.start(endpoints) == []
    try:
        yield desk
    finally:
        await remote.stop()
        await local.stop()


@pytest.mark.asyncio
async def test_a_request_on_a_hosts_socket_is_shown_and_recorded_as_that_host(
        desk: Desk) -> None:
    hook = await start_hook(desk.hook("box-a"), permission_event("s-1", "make test"))

    request = await desk.next_request()
    desk.broker.answer(request.request_id, Decision.allow_once(request.tool_input))
    run = await finish_hook(hook)

    assert request.host == "box-a"
    assert request.session_name.startswith("box-a · ")
    assert run.returncode == 0 and run.decision is not None
    assert run.decision["behavior"] == "allow"
    [entry] = ledger_entries(desk.db)
    assert (entry.host, entry.outcome) == ("box-a", "allow_once")
    assert desk.hub.session(request.session_id).host == "box-a"


@pytest.mark.asyncio
async def test_a_host_claiming_another_hosts_session_gets_a_session_of_its_own(
        desk: Desk) -> None:
    first = await start_hook(desk.hook("box-b"), permission_event("shared", "ls b"))
    from_b = await desk.next_request()
    second = await start_hook(desk.hook("box-a"), permission_event("shared", "ls a"))
    from_a = await desk.next_request()
    for request in (from_a, from_b):
        desk.broker.answer(request.request_id, Decision.deny("no"))
    await finish_hook(first)
    await finish_hook(second)

    assert (from_b.host, from_a.host) == ("box-b", "box-a")
    assert from_a.session_id != from_b.session_id
    assert desk.hub.session(from_a.session_id).host == "box-a"
    assert desk.hub.session(from_b.session_id).host == "box-b"


@pytest.mark.asyncio
async def test_a_host_claiming_a_local_sessions_id_gets_a_session_of_its_own(
        desk: Desk) -> None:
    local = await start_hook(desk.hook(None), permission_event("local-1", "ls here"))
    from_here = await desk.next_request()
    remote = await start_hook(desk.hook("box-a"), permission_event("local-1", "ls there"))
    from_a = await desk.next_request()
    for request in (from_here, from_a):
        desk.broker.answer(request.request_id, Decision.deny("no"))
    await finish_hook(local)
    await finish_hook(remote)

    assert from_here.host is None and from_a.host == "box-a"
    assert from_a.session_id != from_here.session_id
    assert not desk.hub.session(from_a.session_id).name.startswith("Claude Code")


@pytest.mark.asyncio
async def test_one_hosts_token_does_not_open_another_hosts_socket(desk: Desk) -> None:
    run = await finish_hook(await start_hook(desk.hook("box-b", token_of="box-a"),
                                             permission_event("s-2")))

    assert (run.returncode, run.stdout) == (0, "")
    assert desk.remote.servers["box-b"].refused == 1
    assert desk.added.empty()


@pytest.mark.asyncio
async def test_a_hosts_token_does_not_open_the_local_socket(desk: Desk) -> None:
    run = await finish_hook(await start_hook(desk.hook(None, token_of="box-a"),
                                             permission_event("s-3")))

    assert (run.returncode, run.stdout) == (0, "")
    assert desk.local.refused == 1


def test_each_host_has_its_own_private_socket(desk: Desk) -> None:
    paths = {host_socket_path(name) for name in ("box-a", "box-b")}

    assert len(paths) == 2
    for path in paths:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert desk.local.socket_path not in paths


@pytest.mark.asyncio
async def test_the_forward_line_names_the_hosts_socket(desk: Desk) -> None:
    line = desk.remote.forward_line("box-a")

    assert line.startswith("RemoteForward ")
    assert line.endswith(str(host_socket_path("box-a")))
    assert ".qoder-desktop/desk.sock" in line


@pytest.mark.asyncio
async def test_a_hook_deployed_before_transcript_watching_still_gets_its_answer(
        desk: Desk) -> None:
    argv = desk.hook("box-a")
    hook_file = Path(argv[1])
    older = hook_file.read_text(encoding="utf-8").replace(
        f"VERSION = {protocol.VERSION}\n", f"VERSION = {protocol.OLDEST_VERSION}\n", 1)
    assert older != hook_file.read_text(encoding="utf-8")
    hook_file.write_text(older, encoding="utf-8")
    hook = await start_hook(argv, permission_event("s-old", "make old"))

    request = await desk.next_request()
    desk.broker.answer(request.request_id, Decision.deny("not today"))
    run = await finish_hook(hook)

    assert run.decision == {"behavior": "deny", "message": "not today"}
