"""The gateway under abuse: idle sockets never lock a real agent out or flood the log.

A bounded number of loopback sockets that send half a request and then nothing; a
real MCP client (the `mcp` SDK) must still list the tool and get a person's answer,
and the gateway's log must stay small.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import resource
import select
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta

import httpx
import pytest
import pytest_asyncio
from helpers.broker_events import route_broker_events
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.gateway.first_connection import ServingState
from qoder_desktop.gateway.limits import RateLimitedLog, gateway_log_limit
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

TOKEN = "test-gateway-token-abuse-0123456789"
WAIT = 15.0
CAP = 16
HALF_A_REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def _no_sessions(*args: object) -> object:
    raise AssertionError("the gateway never starts in-app sessions")


@pytest_asyncio.fixture
async def rig(db: Database) -> AsyncIterator[tuple[ApprovalGateway, asyncio.Queue[
        ApprovalRequest]]]:
    """A gateway with a small connection cap and a short header deadline."""
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, _no_sessions)
    gateway = ApprovalGateway(broker, hub, TOKEN, port=0, max_connections=CAP,
                              header_timeout=0.5)
    added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    finished: asyncio.Queue[tuple[BrokerEvent, ApprovalRequest, Decision | None]] = (
        asyncio.Queue())
    route_broker_events(broker, added, finished)
    await gateway.start()
    try:
        yield gateway, added
    finally:
        await gateway.stop()


async def idle_sockets(port: int, count: int) -> list[socket.socket]:
    """`count` loopback connections that each send half a request head, then nothing."""
    loop = asyncio.get_running_loop()
    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", port))
        await loop.sock_sendall(sock, HALF_A_REQUEST)
        sockets.append(sock)
    return sockets


async def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed `sock` (EOF or reset)."""
    try:
        data = await asyncio.wait_for(asyncio.get_running_loop().sock_recv(sock, 1024), WAIT)
    except (ConnectionResetError, BrokenPipeError):
        return True
    return data == b""


async def ask_through_mcp(url: str, added: asyncio.Queue[ApprovalRequest],
                          broker: ApprovalBroker) -> dict[str, object]:
    """A real MCP client lists the tool and asks; a person allows; returns the result."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                 timeout=httpx.Timeout(WAIT)) as http, \
            streamable_http_client(url, http_client=http) as (read, write, _), \
            ClientSession(read, write, timedelta(seconds=WAIT),
                          client_info=types.Implementation(name="agent", version="1")
                          ) as session:
        await session.initialize()
        tools = await session.list_tools()
        assert [tool.name for tool in tools.tools] == ["approve"]
        call = asyncio.ensure_future(session.call_tool("approve", {
            "tool_name": "Bash", "input": {"command": "make"}, "tool_use_id": "toolu_1"}))
        request = await asyncio.wait_for(added.get(), WAIT)
        broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        result = await asyncio.wait_for(call, WAIT)
        content = result.content[0]
        assert isinstance(content, types.TextContent)
        return dict(json.loads(content.text))


OPENER = f"""
import resource, socket, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
held = []
for _ in range(int(sys.argv[2])):
    sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    sock.sendall({HALF_A_REQUEST!r})
    held.append(sock)
print(len(held), flush=True)
sys.stdin.read()
"""


def _assert_logged_little(records: list[logging.LogRecord], elapsed: float) -> None:
    """A flood left a few dozen log lines: the gateway's rate limit lets one burst of
    each kind through per window, so a run slowed past a window (a loaded machine)
    may show one more burst per kind for each window it lasted."""
    lines = [r for r in records
             if r.name.startswith(("qoder_desktop.gateway", "uvicorn", "asyncio", "qasync"))]
    limit = gateway_log_limit()
    kinds = len({(r.name, str(r.msg)) for r in lines})
    later_windows = int(elapsed // limit.window)
    assert len(lines) < 60 + later_windows * limit.burst * kinds, (len(lines), elapsed)
    assert sum(len(r.getMessage()) + len(r.exc_text or "") for r in lines) < 20_000 * (
        1 + later_windows)


@pytest.fixture
def few_descriptors() -> Iterator[int]:
    """This process may open only a few hundred files (as with a desktop's 1024, scaled)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = len(os.listdir("/proc/self/fd")) + 200
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(low, hard), hard))
    try:
        yield low
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.asyncio
async def test_a_flood_of_idle_sockets_neither_locks_out_an_agent_nor_floods_the_log(
        db: Database, few_descriptors: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    started = time.monotonic()
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    gateway = ApprovalGateway(broker, SessionHub(db, ledger, broker, _no_sessions), TOKEN,
                              port=0)
    added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    route_broker_events(broker, added, asyncio.Queue())
    await gateway.start()
    # In the app every loop error opens a message box: a flood must cause none.
    loop = asyncio.get_running_loop()
    loop_errors: list[dict[str, object]] = []
    previous_handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: loop_errors.append(context))
    # More sockets than this process has descriptors, held by another process.
    opener = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OPENER, str(gateway.port), str(few_descriptors + 100),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    try:
        assert opener.stdout is not None
        opened = await asyncio.wait_for(opener.stdout.readline(), WAIT)
        assert int(opened) == few_descriptors + 100
        result = await ask_through_mcp(gateway.url, added, broker)
        assert result == {"behavior": "allow", "updatedInput": {"command": "make"}}
        assert gateway.guard.open_connections <= gateway.guard.max_connections
    finally:
        loop.set_exception_handler(previous_handler)
        opener.kill()
        await opener.wait()
        await gateway.stop()
    assert [context.get("message") for context in loop_errors] == []
    _assert_logged_little(caplog.records, time.monotonic() - started)


BURSTS = f"""
import resource, socket, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
held = []
for count in map(int, sys.argv[2].split(",")):  # say how many are open after each burst
    while len(held) < count:
        sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        sock.sendall({HALF_A_REQUEST!r})
        held.append(sock)
    print(len(held), flush=True)
sys.stdin.read()
"""
QUEUED_BEFORE_START = 100
"""Connections the kernel queues before the gateway's server starts (its backlog is 128)."""


@pytest.mark.asyncio
async def test_a_flood_queued_before_the_server_starts_locks_no_agent_out_and_logs_little(
        db: Database, few_descriptors: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    started = time.monotonic()
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    gateway = ApprovalGateway(broker, SessionHub(db, ledger, broker, _no_sessions), TOKEN,
                              port=0)
    added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    route_broker_events(broker, added, asyncio.Queue())
    await gateway.start()
    loop = asyncio.get_running_loop()
    loop_errors: list[dict[str, object]] = []
    previous_handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: loop_errors.append(context))
    total = few_descriptors + 100  # in the end more than this process has descriptors
    opener = subprocess.Popen([sys.executable, "-c", BURSTS, str(gateway.port),
                               f"{QUEUED_BEFORE_START},{total}"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert opener.stdout is not None
        # The loop is held here (as by a busy start-up) while the first burst connects:
        # nothing accepts it, the kernel queues it, the server has not started.
        ready, _, _ = select.select([opener.stdout], [], [], WAIT)
        assert ready and int(opener.stdout.readline()) == QUEUED_BEFORE_START
        assert gateway.state is ServingState.WAITING
        result = await ask_through_mcp(gateway.url, added, broker)  # queued behind them
        assert result == {"behavior": "allow", "updatedInput": {"command": "make"}}
        assert gateway.guard.open_connections <= gateway.guard.max_connections
        rest = await asyncio.wait_for(asyncio.to_thread(opener.stdout.readline), WAIT)
        assert int(rest) == total  # the server went on accepting (and closing) the rest
        assert gateway.guard.open_connections <= gateway.guard.max_connections
    finally:
        loop.set_exception_handler(previous_handler)
        opener.kill()
        opener.wait()
        await gateway.stop()
    assert [context.get("message") for context in loop_errors] == []
    _assert_logged_little(caplog.records, time.monotonic() - started)


@pytest.mark.asyncio
async def test_a_connection_that_never_finishes_its_request_head_is_closed(
        rig: tuple[ApprovalGateway, asyncio.Queue[ApprovalRequest]]) -> None:
    gateway, added = rig
    [sock] = await idle_sockets(gateway.port, 1)
    try:
        assert await closed_by_server(sock)
    finally:
        sock.close()
    assert gateway.guard.timed_out == 1
    # A kept-alive connection that starts a second request and stops half-way, too.
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, ("127.0.0.1", gateway.port))
        await loop.sock_sendall(sock, b"GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = await asyncio.wait_for(loop.sock_recv(sock, 65536), WAIT)
        assert first.startswith(b"HTTP/1.1 401")
        await loop.sock_sendall(sock, HALF_A_REQUEST)
        assert await closed_by_server(sock)
    finally:
        sock.close()
    assert gateway.guard.timed_out == 2
    # Real agents are unaffected.
    result = await ask_through_mcp(gateway.url, added, gateway._broker)
    assert result["behavior"] == "allow"


def test_like_log_lines_pass_in_a_burst_then_as_one_summary() -> None:
    limit = RateLimitedLog(burst=3, window=3600)
    logger = logging.getLogger("qoder_desktop.test.flood")
    records = [logger.makeRecord(logger.name, logging.WARNING, __file__, 1,
                                 "refused a request from %s", (f"127.0.0.1:{port}",), None)
               for port in range(1000)]
    passed = [record for record in records if limit.filter(record)]
    assert len(passed) == 3 and limit.dropped == 997
    other = logger.makeRecord(logger.name, logging.WARNING, __file__, 1, "another kind", (),
                              None)
    assert limit.filter(other)

    limit.window = 0.0  # the window is over: the next line says what was dropped
    record = logger.makeRecord(logger.name, logging.WARNING, __file__, 1,
                               "refused a request from %s", ("127.0.0.1:1",), None)
    assert limit.filter(record)
    assert "997 more like this" in record.getMessage()
