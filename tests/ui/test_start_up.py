"""Start-up: the main window paints before the core loads; the keyring is read only when
an agent first connects, and a slow one neither freezes the loop nor lets a request through
without the token (a keyring can take seconds to answer)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import json
import socket
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from helpers.loop import LoopTicks
from helpers.loop import run as run_on_loop
from helpers.loop import settle as settle_on_loop
from helpers.memory_keyring import MemoryKeyring, SlowKeyring
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from qoder_desktop.cli import parse_app_args
from qoder_desktop.config import keyring_calls as keyring_module
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import RedactSecrets, SecretStore
from qoder_desktop.config.settings import load_settings
from qoder_desktop.store.database import Database
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.scheduling import after_first_paint
from qoder_desktop.ui.start_up import StartUp
from qoder_desktop.ui.windows.main_window import MainWindow

T = TypeVar("T")


def run(loop: AppEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    """`helpers.loop.run` with room for a whole start-up (30 s)."""
    return run_on_loop(loop, coroutine, timeout=30)


async def settle(condition: Any) -> None:
    """`helpers.loop.settle` with room for a whole start-up (20 s)."""
    await settle_on_loop(condition, timeout=20.0)


class PaintLog(QObject):
    """Notes the paint events of one widget in `events`."""

    def __init__(self, widget: QWidget, events: list[str]) -> None:
        super().__init__(widget)
        self.events = events
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.events.append("paint")
        return False


def test_the_work_after_start_runs_only_once_the_window_has_painted(
        qtbot: QtBot, loop: AppEventLoop) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    events: list[str] = []
    PaintLog(window, events)
    after_first_paint(window, lambda: events.append("loaded"), fallback_ms=60_000)
    window.show()
    run(loop, settle(lambda: "loaded" in events))
    assert events[0] == "paint" and events.count("loaded") == 1


def test_a_window_that_never_paints_still_loads(qtbot: QtBot, loop: AppEventLoop) -> None:
    hidden = QWidget()
    qtbot.addWidget(hidden)
    events: list[str] = []
    after_first_paint(hidden, lambda: events.append("loaded"), fallback_ms=50)
    run(loop, settle(lambda: events == ["loaded"]))


@pytest.fixture
def slow_keyring() -> Iterator[SlowKeyring]:
    """The app's keyring hangs until released (always released at the end)."""
    backend = SlowKeyring()
    try:
        yield backend
    finally:
        backend.release.set()


@pytest.fixture
def start_up(qtbot: QtBot, loop: AppEventLoop, app_paths: AppPaths,
             slow_keyring: SlowKeyring) -> Iterator[StartUp]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app_paths.settings_file.write_text(json.dumps({"gateway_port": port}), encoding="utf-8")
    db = Database.open(app_paths.database)
    window = MainWindow()  # closed below, after the core: closing it first would quit
    window.show()
    starting = StartUp(parse_app_args([]), app_paths, db, load_settings(app_paths.settings_file),
                       RedactSecrets(), window, f"qoder-desktop-test-{os.getpid()}-{port}",
                       secrets=SecretStore(slow_keyring, extra_allowed=(MemoryKeyring,)))
    yield starting

    async def stop() -> None:
        desktop = starting.desktop
        if desktop is None:
            return
        if desktop.servers.gateway is not None and desktop.servers.gateway.running:
            await desktop.servers.gateway.stop()
        if desktop.servers.terminal_hooks is not None:
            await desktop.servers.terminal_hooks.stop()
        await desktop.remote_hosts.stop()
        desktop.dialogs.close_all()
        desktop.bridge.unsubscribe()
        desktop.tray.dispose()

    window.set_quitting()
    window.close()
    run(loop, stop())
    starting.close()
    window.deleteLater()
    db.close()


async def _ticking_until(condition: Any) -> int:
    """Loop turns counted by a 5 ms ticker until `condition()` holds."""
    async with LoopTicks() as ticks:
        await settle(condition)
    return ticks.count


async def _first_request(port: int) -> bytes:
    """An agent's first request to the gateway (a wrong token): its status line, or b""
    when the connection was closed unanswered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Authorization: Bearer not-the-token\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        try:
            return await reader.readline()
        except ConnectionError:
            return b""
    finally:
        writer.close()


def test_start_up_reads_no_keyring_and_an_agents_first_connection_waits_for_it(
        start_up: StartUp, slow_keyring: SlowKeyring, loop: AppEventLoop) -> None:
    """The gateway listens without its token (the keyring is not loaded for a session no
    agent connects to); the first agent's connection reads it, the loop serving and the
    window saying so while the keyring hangs, and is answered once it answers."""
    async def scenario() -> None:
        await start_up.load()
        desktop = start_up.desktop
        assert desktop is not None and slow_keyring.calls == 0  # nobody asked the keyring
        servers = desktop.servers
        await settle(lambda: servers.gateway_status.startswith("Approval gateway listening"))
        assert servers.gateway is not None and servers.gateway.running
        assert "read from the OS keyring when an agent first connects" in servers.gateway_status
        assert servers.gateway_token is None
        request = asyncio.ensure_future(_first_request(servers.gateway.port))
        ticks = await _ticking_until(lambda: slow_keyring.calls > 0 and "Waiting for the "
                                     "keyring" in desktop.window.statusBar().currentMessage())
        assert ticks > 3  # the loop kept serving while the keyring hung
        assert not request.done()  # nothing is served before the token is known
        slow_keyring.release.set()
        assert (await asyncio.wait_for(request, 30)).startswith(b"HTTP/1.1 401")
        assert servers.gateway_token is not None and servers.gateway.running
        assert "Waiting for the keyring" not in desktop.window.statusBar().currentMessage()
        assert servers.gateway_status.endswith(servers.gateway_token.message)

    run(loop, scenario())


def test_a_keyring_that_never_answers_closes_the_gateway_at_the_first_agent_and_says_why(
        start_up: StartUp, slow_keyring: SlowKeyring, loop: AppEventLoop,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyring_module, "KEYRING_TIMEOUT_S", 0.5)

    async def scenario() -> None:
        await start_up.load()
        desktop = start_up.desktop
        assert desktop is not None
        servers = desktop.servers
        await settle(lambda: servers.gateway is not None and servers.gateway.running)
        assert servers.gateway is not None
        assert await asyncio.wait_for(_first_request(servers.gateway.port), 30) == b""
        await settle(lambda: "keyring did not answer within 0.5 s" in servers.gateway_status)
        assert servers.gateway_status.startswith("The approval gateway could not start when "
                                                 "an agent connected")
        assert desktop.window.statusBar().currentMessage() == servers.gateway_status
        assert not servers.gateway.running
        assert desktop.servers.terminal_hooks is not None  # the rest of the app did start

    run(loop, scenario())


def test_the_window_gets_the_application_icon_after_the_first_paint(
        start_up: StartUp, slow_keyring: SlowKeyring, loop: AppEventLoop) -> None:
    """The icon's eight PNG reads wait for start-up; the shown window then carries it too
    (on its native window, which is what a task bar reads)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setWindowIcon(QIcon())  # as run_gui leaves it before the first paint
    window = start_up.window
    assert window.windowIcon().isNull()  # the window renders no icon of its own
    slow_keyring.release.set()
    run(loop, start_up.load())
    assert not app.windowIcon().isNull()  # dialogs and message boxes get it from here on
    assert window.windowIcon().cacheKey() == app.windowIcon().cacheKey()
    handle = window.windowHandle()
    assert handle is not None and not handle.icon().isNull()


PAUSE_PROBE = """
import gc, os, sys
from qoder_desktop.ui import start_up
from qoder_desktop.ui.windows.main_window import MainWindow

shown = MainWindow.show

def show(self):
    print("collection on when shown:", gc.isenabled(), flush=True)
    shown(self)

def load(self):
    print("collection on when loading:", gc.isenabled(), flush=True)
    os._exit(0)

MainWindow.show = show
start_up.StartUp.load = load
from qoder_desktop.__main__ import main
sys.exit(main([]))
"""


def test_garbage_collection_is_off_until_the_first_paint_then_on(tmp_path: Any) -> None:
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               QODER_DESKTOP_HOME=str(tmp_path / "qoder"), XDG_RUNTIME_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", PAUSE_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.splitlines() == ["collection on when shown: False",
                                        "collection on when loading: True"], done.stderr


@pytest.mark.parametrize("rest_of_start_up", ["finishes", "fails"])
def test_a_terminal_prompt_while_start_up_is_unfinished_gets_its_whole_dialog_and_a_deny(
        start_up: StartUp, slow_keyring: SlowKeyring, loop: AppEventLoop, qtbot: QtBot,
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch, rest_of_start_up: str) -> None:
    """The first way in (the terminal hook server) opens while the rest still loads (the
    gateway is held back here, no dialog was warmed): a prompt arriving then is
    shown in full and waits for the person, also when the rest of start-up then fails
    (the person is told), and gets exactly their answer."""
    from PySide6.QtCore import Qt

    from qoder_desktop.domain.models import DecidedBy
    from qoder_desktop.terminal import hook_client
    from qoder_desktop.ui import start_up as start_up_module

    if rest_of_start_up == "fails":
        def broken_warm_up(_desktop: Any) -> None:
            raise RuntimeError("the dialogs' warm-up broke")

        monkeypatch.setattr(start_up_module, "warm_dialog", broken_warm_up)
    event = {"hook_event_name": "PermissionRequest", "session_id": "cli-early-1",
             "cwd": str(tmp_path), "permission_mode": "default", "tool_name": "Bash",
             "tool_input": {"command": "make deploy-early"}, "permission_suggestions": []}

    deciders: list[Any] = []
    hold = asyncio.Event()
    start_gateway = start_up._start_gateway

    async def held_gateway(desktop: Any) -> None:
        await hold.wait()
        await start_gateway(desktop)

    monkeypatch.setattr(start_up, "_start_gateway", held_gateway)

    async def scenario() -> dict[str, Any] | None:
        task = start_up.load()
        await settle(lambda: start_up.desktop is not None
                     and start_up.desktop.servers.terminal_hooks is not None
                     and start_up.desktop.servers.terminal_hooks.running)
        desktop = start_up.desktop
        assert desktop is not None
        assert not task.done() and desktop.servers.gateway is None  # start-up unfinished
        desktop.broker.subscribe(lambda _event, _request, decision: deciders.append(
            decision.decided_by) if decision is not None else None)
        answer = asyncio.ensure_future(asyncio.to_thread(hook_client.ask_app, "claude", event))
        await settle(lambda: desktop.dialogs.open_dialogs())
        [dialog] = desktop.dialogs.open_dialogs()
        await settle(dialog.is_armed)
        assert dialog.windowTitle().startswith("Approve Bash")
        assert json.loads(dialog.json_editor.editor.toPlainText()) == {
            "command": "make deploy-early"}
        hold.set()  # the rest of start-up runs while the prompt waits
        await asyncio.wait([task])
        if rest_of_start_up == "fails":
            assert desktop.window.statusBar().currentMessage() == (
                "Qoder Desktop could not finish starting: the dialogs' warm-up broke")
        else:
            assert task.exception() is None
        # Nothing answers for the person: the one answer, below, is the person's Escape.
        assert not answer.done()
        assert desktop.broker.is_pending(dialog.request.request_id)
        assert desktop.dialogs.open_dialogs() == [dialog] and dialog.isVisible()
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # deny, with the default reason
        return await answer

    output = run(loop, scenario())
    assert output is not None
    assert output["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    assert deciders == [DecidedBy.USER]


def test_settings_problems_are_read_after_the_paint_and_shown(
        qtbot: QtBot, loop: AppEventLoop, app_paths: AppPaths) -> None:
    """`run_gui` leaves the settings to start-up: a broken file is repaired and said so."""
    app_paths.settings_file.write_text('{"gateway_port": "not a port"}', encoding="utf-8")
    db = Database.open(app_paths.database)
    window = MainWindow()
    qtbot.addWidget(window)
    starting = StartUp(parse_app_args([]), app_paths, db, None, RedactSecrets(), window,
                       f"qoder-desktop-test-{os.getpid()}-settings",
                       secrets=SecretStore(MemoryKeyring(), extra_allowed=(MemoryKeyring,)))
    messages: list[str] = []
    window.ui.statusBar.messageChanged.connect(messages.append)

    async def until_core() -> None:
        task = starting.load()
        await settle(lambda: starting.desktop is not None)
        task.cancel()

    try:
        run(loop, until_core())
        assert starting.loaded is not None and starting.loaded.problems
        assert any(message.startswith("Settings: ") and "gateway_port" in message
                   for message in messages), messages
        assert starting.desktop is not None
        assert starting.desktop.settings.gateway_port == starting.loaded.settings.gateway_port
    finally:
        desktop = starting.desktop
        if desktop is not None:
            desktop.dialogs.close_all()
            desktop.bridge.unsubscribe()
            desktop.tray.dispose()
        window.set_quitting()
        starting.close()
        db.close()


FIRST_PAINT_PROBE = """
import os, sys
from qoder_desktop.ui import start_up
from qoder_desktop.ui.windows.main_window import MainWindow

LATER = ("pydantic", "qoder_desktop.domain.models", "qoder_desktop.domain.session_options",
         "qoder_desktop.config.settings", "qoder_desktop.ui.windows.new_session_form")
shown = MainWindow.show

def show(self):
    print("loaded when shown:", sorted(name for name in LATER if name in sys.modules))
    shown(self)

def build_core(self, loaded):  # ends the app before the core (and its keyring) exists
    print("models loaded for the core:", all(name in sys.modules for name in LATER[:4]))
    print("settings problems:", len(loaded.problems))
    os._exit(0)

MainWindow.show = show
start_up.StartUp._build_core = build_core
from qoder_desktop.__main__ import main
sys.exit(main([]))
"""


def test_the_window_is_shown_before_pydantic_and_the_models_load(tmp_path: Any) -> None:
    """The first frame needs none of them; start-up loads them (and reads the settings)
    before it builds the core."""
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               QODER_DESKTOP_HOME=str(tmp_path / "qoder"), XDG_RUNTIME_DIR=str(tmp_path))
    config = tmp_path / "qoder" / "config"
    config.mkdir(parents=True)
    (config / "settings.json").write_text('{"default_backend": "nope"}', encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", FIRST_PAINT_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.splitlines() == ["loaded when shown: []",
                                        "models loaded for the core: True",
                                        "settings problems: 2"], done.stderr
