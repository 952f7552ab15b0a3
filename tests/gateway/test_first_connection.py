"""The gateway listens at start and starts its HTTP server only when the first agent
connects; stopping works in every state and a failure to start fails closed.

The servers are real uvicorn servers on loopback (the gateway's own, or a plain ASGI app
whose start the test holds), on the app's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import route_broker_events
from helpers.gateway_rig import TOKEN, Fixture, ask, mcp_client, result_of
from uvicorn.config import Config
from uvicorn.server import Server

from qoder_desktop.domain.models import Decision
from qoder_desktop.gateway.contract import LOOPBACK
from qoder_desktop.gateway.first_connection import ServeOnFirstConnection, ServingState
from qoder_desktop.gateway.http_stack import QuietServer
from qoder_desktop.gateway.limits import ACCEPT_BATCH, ConnectionGuard
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.gateway.serving import GatewayError, bind_loopback
from qoder_desktop.store.database import Database

WAIT = 10.0
REQUEST = b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Plain:
    """A plain ASGI app under uvicorn whose start (lifespan) the test may hold or fail."""

    def __init__(self, *, hold: bool = False, fail: bool = False) -> None:
        self.starting = asyncio.Event()
        self.go_on = asyncio.Event()
        if not hold:
            self.go_on.set()
        self.fail = fail

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    self.starting.set()
                    await self.go_on.wait()
                    if self.fail:  # (a failed start is the lifespan's end)
                        await send({"type": "lifespan.startup.failed", "message": "no"})
                        return
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"6")]})
        await send({"type": "http.response.body", "body": b"served"})

    def server(self, port: int) -> Server:
        """The gateway's kind of uvicorn server for this app."""
        return QuietServer(Config(self, host=LOOPBACK, port=port, lifespan="on",
                                  log_config=None, access_log=False, ws="none",
                                  http=ConnectionGuard().protocol(), backlog=ACCEPT_BATCH))


class Rig:
    """A listening socket served by `ServeOnFirstConnection`, and what it reported."""

    def __init__(self, build: Callable[[int], Awaitable[Server]]) -> None:
        self.sock = bind_loopback(LOOPBACK, 0)
        self.port = int(self.sock.getsockname()[1])
        self.failures: list[GatewayError] = []
        self.building = asyncio.Event()

        async def built() -> Server:
            self.building.set()
            return await build(self.port)

        self.serving = ServeOnFirstConnection(self.sock, built, "the test server",
                                              on_failure=self.failures.append)


@pytest_asyncio.fixture
async def tasks_before() -> AsyncIterator[set[asyncio.Task[Any]]]:
    """The loop's tasks before the test; after it, no other task may be left."""
    before = set(asyncio.all_tasks())
    yield before


async def left_over(before: set[asyncio.Task[Any]]) -> list[str]:
    """Tasks started since `before` that are still there (after a loop turn), but for
    sse-starlette's one watcher per loop: started by the first event stream, it polls
    for the process's shutdown as long as the loop runs (as it did before the gateway's
    server was deferred)."""
    await asyncio.sleep(0)
    current = asyncio.current_task()
    return [repr(task) for task in asyncio.all_tasks() - before
            if task is not current and task.get_coro().__qualname__ != "_shutdown_watcher"]


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A client that connects and sends one request (a server that fails closed may reset
    the connection before the request is out: `answer` then reads b"")."""
    reader, writer = await asyncio.open_connection(LOOPBACK, port)
    writer.write(REQUEST)
    with contextlib.suppress(ConnectionResetError):
        await writer.drain()
    return reader, writer


async def answer(reader: asyncio.StreamReader) -> bytes:
    """What the server sent before it closed (b"" for a reset); never hangs the test."""
    try:
        return await asyncio.wait_for(reader.read(65536), WAIT)
    except ConnectionResetError:
        return b""


def port_is_free(port: int) -> bool:
    """True when nothing listens on `port` any more."""
    with socket.socket() as probe:
        return probe.connect_ex((LOOPBACK, port)) != 0


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


# -- the approval gateway ---------------------------------------------------------------


async def assert_stopped_cleanly(rig: Rig, tasks_before: set[asyncio.Task[Any]],
                                 caplog: pytest.LogCaptureFixture) -> None:
    """The gateway stopped with nothing failed, its port free, no task and no error left."""
    assert rig.serving.state is ServingState.STOPPED and rig.failures == []
    assert port_is_free(rig.port)
    assert await left_over(tasks_before) == []
    assert errors(caplog) == []


@pytest.mark.asyncio
async def test_the_gateway_listens_without_its_server_and_serves_the_first_agent(
        db: Database, tasks_before: set[asyncio.Task[Any]],
        caplog: pytest.LogCaptureFixture) -> None:
    ledger, broker, hub = app_side(db)
    gateway = ApprovalGateway(broker, hub, TOKEN, port=0)
    fixture = Fixture(gateway, broker, hub, db, ledger)
    route_broker_events(broker, fixture.added, fixture.finished)
    await gateway.start()
    try:
        assert gateway.running and gateway.state is ServingState.WAITING
        async with mcp_client(gateway.url) as session:
            assert gateway.state is ServingState.SERVING
            call = await ask(session)
            request = await fixture.next_request()
            broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
            assert result_of(await asyncio.wait_for(call, WAIT))["behavior"] == "allow"
    finally:
        await gateway.stop()
    assert gateway.state is ServingState.STOPPED and not gateway.running
    assert port_is_free(gateway.port)
    assert await left_over(tasks_before) == []
    assert errors(caplog) == []


@pytest.mark.asyncio
async def test_a_gateway_stopped_before_any_agent_came_leaves_nothing_behind(
        db: Database, tasks_before: set[asyncio.Task[Any]],
        caplog: pytest.LogCaptureFixture) -> None:
    _ledger, broker, hub = app_side(db)
    gateway = ApprovalGateway(broker, hub, TOKEN, port=0)
    await gateway.start()
    assert gateway.state is ServingState.WAITING
    await gateway.stop()
    await gateway.stop()  # again: nothing to do
    assert gateway.state is ServingState.STOPPED and port_is_free(gateway.port)
    assert await left_over(tasks_before) == []
    assert errors(caplog) == []
    await gateway.start()  # and it starts again
    try:
        async with mcp_client(gateway.url) as session:
            assert [tool.name for tool in (await session.list_tools()).tools] == ["approve"]
    finally:
        await gateway.stop()


@pytest.mark.asyncio
async def test_a_gateway_whose_http_stack_cannot_load_fails_closed_and_says_so(
        db: Database, monkeypatch: pytest.MonkeyPatch, tasks_before: set[asyncio.Task[Any]],
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "qoder_desktop.gateway.http_stack", None)  # a broken install
    _ledger, broker, hub = app_side(db)
    gateway = ApprovalGateway(broker, hub, TOKEN, port=0)
    failures: list[GatewayError] = []
    await gateway.start(on_failure=failures.append)
    reader, writer = await connect(gateway.port)
    try:
        assert await answer(reader) == b""  # reset, not left hanging
    finally:
        writer.close()
    assert gateway.state is ServingState.FAILED and not gateway.running
    [failure] = failures
    assert "could not start when an agent connected" in str(failure)
    assert "ModuleNotFoundError" in str(failure) and TOKEN not in str(failure)
    assert port_is_free(gateway.port)
    await gateway.stop()
    assert await left_over(tasks_before) == []
    assert errors(caplog) == ["the approval gateway could not start its server"]


# -- every state of a deferred server -----------------------------------------------------


@pytest.mark.asyncio
async def test_stopping_while_the_server_is_being_built_resets_the_waiting_connection(
        tasks_before: set[asyncio.Task[Any]], caplog: pytest.LogCaptureFixture) -> None:
    never = asyncio.Event()

    async def slow_build(port: int) -> Server:
        await never.wait()  # the HTTP stack still loading
        return Plain().server(port)

    rig = Rig(slow_build)
    rig.serving.start()
    reader, writer = await connect(rig.port)
    try:
        await asyncio.wait_for(rig.building.wait(), WAIT)
        assert rig.serving.state is ServingState.STARTING
        await rig.serving.stop()
        assert await answer(reader) == b""
    finally:
        writer.close()
    await assert_stopped_cleanly(rig, tasks_before, caplog)


@pytest.mark.asyncio
async def test_stopping_while_the_server_starts_ends_it_cleanly(
        tasks_before: set[asyncio.Task[Any]], caplog: pytest.LogCaptureFixture) -> None:
    app = Plain(hold=True)

    async def build(port: int) -> Server:
        return app.server(port)

    rig = Rig(build)
    rig.serving.start()
    reader, writer = await connect(rig.port)
    try:
        await asyncio.wait_for(app.starting.wait(), WAIT)  # uvicorn's start is under way
        assert rig.serving.state is ServingState.STARTING
        stopping = asyncio.ensure_future(rig.serving.stop())
        await asyncio.sleep(0)
        app.go_on.set()
        await asyncio.wait_for(stopping, WAIT)
        await answer(reader)  # served or closed, but over
    finally:
        writer.close()
    await assert_stopped_cleanly(rig, tasks_before, caplog)


@pytest.mark.asyncio
async def test_the_waiting_connection_is_served_and_a_stop_after_ends_the_server(
        tasks_before: set[asyncio.Task[Any]], caplog: pytest.LogCaptureFixture) -> None:
    async def build(port: int) -> Server:
        return Plain().server(port)

    rig = Rig(build)
    rig.serving.start()
    assert rig.serving.state is ServingState.WAITING
    reader, writer = await connect(rig.port)
    try:
        reply = await answer(reader)
        assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"served")
        assert rig.serving.state is ServingState.SERVING
        await rig.serving.stop()
        assert await answer(reader) == b""  # the kept-alive connection is closed
    finally:
        writer.close()
    await assert_stopped_cleanly(rig, tasks_before, caplog)


@pytest.mark.asyncio
async def test_a_server_whose_start_fails_closes_the_socket_and_reports_it(
        tasks_before: set[asyncio.Task[Any]], caplog: pytest.LogCaptureFixture) -> None:
    async def build(port: int) -> Server:
        return Plain(fail=True).server(port)  # its start-up fails: uvicorn exits

    rig = Rig(build)
    rig.serving.start()
    reader, writer = await connect(rig.port)
    try:
        assert await answer(reader) == b""
    finally:
        writer.close()
    assert rig.serving.state is ServingState.FAILED and not rig.serving.running
    [failure] = rig.failures
    assert str(failure).startswith("The test server could not start when an agent connected")
    assert port_is_free(rig.port)
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection(LOOPBACK, rig.port)
    await rig.serving.stop()
    assert await left_over(tasks_before) == []
    assert "the test server could not start its server" in errors(caplog)
