"""A same-user process floods the hook socket: the app never freezes, a real hook still
gets its answer, and the log stays small.

The attacker is a child process (`helpers/hook_attacker.py`) with a descriptor limit of
its own; the app side (server, broker, the app's error reporter as the loop's exception
handler) runs on the test's loop, under a lowered ``RLIMIT_NOFILE`` where the test says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import re
import resource
import sys
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.hook_command import start_hook
from helpers.loop import settle
from PySide6.QtWidgets import QApplication, QMessageBox

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.store.database import Database
from qoder_desktop.terminal import protocol
from qoder_desktop.terminal.server import TerminalHookServer
from qoder_desktop.ui.error_reporter import TITLE, ErrorReporter

pytestmark = pytest.mark.asyncio

ATTACKER = Path(__file__).parents[1] / "helpers" / "hook_attacker.py"
EVENT: dict[str, Any] = {
    "hook_event_name": "PermissionRequest", "session_id": "s-flood", "cwd": "/work/project",
    "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": "make"}}
HEADROOM = 96
"""Descriptors the test process may open beyond those it holds (more than the cap)."""
WAIT = 30.0


@dataclass
class App:
    """The app side: the hook server, the broker a person answers through, the reporter."""

    broker: ApprovalBroker
    hub: SessionHub
    reporter: ErrorReporter
    added: asyncio.Queue[ApprovalRequest]
    server: TerminalHookServer

    def new_server(self, **options: Any) -> TerminalHookServer:
        """Replace the (not yet started) server by one with `options`."""
        self.server = TerminalHookServer(self.broker, self.hub, **options)
        return self.server

    async def answer_next(self, decision: Decision) -> None:
        request = await asyncio.wait_for(self.added.get(), WAIT)
        self.broker.answer(request.request_id, decision)


@pytest_asyncio.fixture
async def app(db: Database, tmp_path: Path) -> AsyncIterator[App]:
    """A broker and hub with the app's error reporter on the loop (no server yet)."""
    _ledger, broker, hub = app_side(db)
    added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    route_broker_events(broker, added, asyncio.Queue[Finished]())
    reporter = ErrorReporter(tmp_path / "qoder-desktop.log")
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(reporter.loop_exception)
    rig = App(broker, hub, reporter, added, TerminalHookServer(broker, hub))
    try:
        yield rig
    finally:
        await rig.server.stop()
        loop.set_exception_handler(previous)
        for box in error_boxes():
            box.done(0)


def error_boxes() -> list[QMessageBox]:
    """The error reporter's boxes the person can see."""
    return [widget for widget in QApplication.topLevelWidgets()
            if isinstance(widget, QMessageBox) and widget.windowTitle() == TITLE
            and widget.isVisible()]


@contextlib.contextmanager
def descriptor_limit(headroom: int) -> Iterator[int]:
    """Lower this process's soft ``RLIMIT_NOFILE`` to what it holds plus `headroom`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = len(os.listdir("/proc/self/fd")) + headroom
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


class Attacker:
    """The attacking child process (see `helpers/hook_attacker.py`)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> Attacker:
        return cls(await asyncio.create_subprocess_exec(
            sys.executable, str(ATTACKER), str(protocol.socket_path()),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE))

    async def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command.encode() + b"\n")
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), 60)
        assert line, "the attacker died"
        return dict(json.loads(line))

    async def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()


@contextlib.asynccontextmanager
async def attacker() -> AsyncIterator[Attacker]:
    """An attacker process, killed afterwards."""
    process = await Attacker.start()
    try:
        yield process
    finally:
        await process.stop()


async def run_hook() -> asyncio.subprocess.Process:
    """The real hook command, as the CLI runs it, with `EVENT` on stdin."""
    return await start_hook(EVENT)


async def printed(process: asyncio.subprocess.Process) -> dict[str, Any]:
    """What the hook printed for the CLI (it must print something)."""
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 0 and out.strip(), err.decode()
    return dict(json.loads(out))


def behavior(output: dict[str, Any]) -> str:
    return str(output["hookSpecificOutput"]["decision"]["behavior"])


async def test_idle_connections_beyond_the_descriptor_limit_never_lock_a_hook_out(
        app: App) -> None:
    # Only the cap closes the idle ones here (their handshake deadline is far off).
    app.new_server(handshake_timeout=10 * WAIT)
    async with attacker() as flood:
        with descriptor_limit(HEADROOM) as limit:
            await app.server.start()
            opened = (await flood.ask(f"idle {2 * limit}"))["connected"]
            assert opened == 2 * limit  # more than the app could ever hold open
            hook = await run_hook()
            await app.answer_next(Decision.allow_once(dict(EVENT["tool_input"])))
            assert behavior(await printed(hook)) == "allow"
            assert app.reporter.reported == 0 and error_boxes() == []
            # The idle ones went oldest first: the closed ones are the first opened.
            listener = app.server.listener
            assert listener is not None and listener.max_connections <= limit // 4
            cap = listener.max_connections
            await settle(lambda: listener.evicted >= opened - cap, WAIT)
            closed = (await flood.ask("status"))["closed"]
            assert closed == list(range(len(closed)))
            assert opened - cap <= len(closed) < opened
    assert listener.accept_errors == 0


async def test_hooks_are_answered_while_a_flood_of_connections_goes_on(app: App) -> None:
    """Another process connects again and again, keeping the app's queue of connections
    full: each real hook still gets in (it tries again while the queue is full), proves
    itself, and the person's answer reaches the CLI."""
    await app.server.start()
    async with attacker() as flood:
        assert (await flood.ask("storm"))["storming"]
        for _ in range(3):
            hook = await run_hook()
            await app.answer_next(Decision.allow_once(dict(EVENT["tool_input"])))
            assert behavior(await printed(hook)) == "allow"
        connected = (await flood.ask("calm"))["connected"]
    assert app.server.listener is not None
    assert connected > 4 * app.server.listener.max_connections  # it was a flood
    assert app.reporter.reported == 0 and error_boxes() == []


async def test_out_of_descriptors_a_waiting_hook_is_answered_and_no_box_opens(
        app: App, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "qoder_desktop.terminal")
    async with attacker() as flood:
        with descriptor_limit(HEADROOM):
            await app.server.start()
            waiting = await run_hook()
            request = await asyncio.wait_for(app.added.get(), WAIT)
            hogged = []
            try:
                with contextlib.suppress(OSError):  # something else took every descriptor
                    while True:
                        hogged.append(os.open(os.devnull, os.O_RDONLY))
                await flood.ask("idle 5")
                await settle(lambda: "could not accept a connection" in caplog.text, WAIT)
                # The hook that proved itself before goes on: the person's answer reaches it.
                app.broker.answer(request.request_id, Decision.deny("Not now."))
                assert behavior(await printed(waiting)) == "deny"
            finally:
                for fd in hogged:
                    os.close(fd)
            # Descriptors free again: accepting resumes and a new hook is answered.
            hook = await run_hook()
            await app.answer_next(Decision.allow_once(dict(EVENT["tool_input"])))
            assert behavior(await printed(hook)) == "allow"
    assert app.reporter.reported == 0 and error_boxes() == []
    assert caplog.text.count("could not accept a connection") <= 12  # rate-limited


async def test_junk_after_the_hello_is_not_taken_in(app: App) -> None:
    """An unproven connection makes the app hold a handshake's worth of bytes, not the
    4 MiB a request line may have: 40 connections sending 1 MiB each cost little."""
    await app.server.start()
    count, size = 40, 1024 * 1024
    async with attacker() as flood:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            result = await flood.ask(f"junk {count} {size}")
            await settle(lambda: app.server.refused >= count, WAIT)
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
    assert result == {"closed": count, "swallowed": 0, "pending": 0}
    assert peak < count * 64 * 1024  # today's main held count * size here
    assert app.server.refused == count


async def test_a_proven_hook_still_sends_a_request_of_megabytes(app: App) -> None:
    """Only the handshake is small: a Write of a big file still reaches the person."""
    await app.server.start()
    content = "x" * (3 * 1024 * 1024)
    event = {**EVENT, "tool_name": "Write",
             "tool_input": {"file_path": "/work/project/big.txt", "content": content}}
    process = await start_hook(event)
    request = await asyncio.wait_for(app.added.get(), WAIT)
    assert request.tool_input["content"] == content
    app.broker.answer(request.request_id, Decision.deny("Too big."))
    assert behavior(await printed(process)) == "deny"


async def test_a_slow_handshake_is_dropped_at_its_deadline(
        app: App, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "qoder_desktop.terminal")
    server = app.new_server(handshake_timeout=0.5)
    async with server:
        reader, writer = await asyncio.open_unix_connection(str(protocol.socket_path()))
        writer.write(protocol.encode({"hello": protocol.HELLO, "version": protocol.VERSION,
                                      "nonce": protocol.new_nonce()}))
        challenge = protocol.decode(await asyncio.wait_for(reader.readline(), WAIT))
        assert challenge["type"] == protocol.CHALLENGE
        writer.write(b"0" * (protocol.PROOF_HEAD_LENGTH // 2))  # half a proof, then nothing
        assert await asyncio.wait_for(reader.read(), WAIT) == b""  # the app hung up
        writer.close()
        assert server.timed_out == 1 and server.refused == 1
        assert "did not prove it is a hook within 0.5 s" in caplog.text


async def test_thousands_of_bad_connects_log_a_few_lines_and_a_summary(app: App) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    count = 3000
    try:
        await app.server.start()
        async with attacker() as flood:
            assert (await flood.ask(f"bad {count}"))["sent"] == count
            await settle(lambda: app.server.refused >= count, WAIT)
        await app.server.stop()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    text = stream.getvalue()
    refusals = [line for line in text.splitlines() if "older protocol" in line]
    assert len(text.encode()) < 16 * 1024  # today's main wrote ~200 bytes per connect
    summarised = sum(int(n) for line in refusals
                     for n in re.findall(r"(\d+) more like this", line))
    assert summarised > 0  # "N more like this were not logged"
    plain = [line for line in refusals if "more like this" not in line
             or "in the last" in line]
    assert len(plain) + summarised == count  # every refusal is logged or counted
