"""A second launch hands its session to the running instance instead of opening an app."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import Backend, PermissionMode
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.ui import start_up as start_up_module
from qoder_desktop.ui.single_instance import (
    InstanceServer,
    claim_instance,
    hand_over,
    hand_over_when_ready,
    server_name,
)


def test_hand_over_reaches_the_running_instance(qtbot: QtBot) -> None:
    name = f"qoder-desktop-test-{uuid.uuid4().hex[:8]}"
    server = InstanceServer(name)
    try:
        with qtbot.waitSignal(server.message_received, timeout=3000) as received:
            assert hand_over(name, {"action": "start", "argv": ["--prompt", "hi"]})
        assert received.args == [{"action": "start", "argv": ["--prompt", "hi"]}]
    finally:
        server.close()


def test_the_instance_server_tells_whether_it_owns_the_name(qtbot: QtBot) -> None:
    """The start-up sweep of leftover secrets removes young folders only when it does."""
    name = f"qoder-desktop-test-{uuid.uuid4().hex[:8]}"
    server = InstanceServer(name)
    try:
        assert server.listening
    finally:
        server.close()
    assert not server.listening


def test_a_second_server_never_takes_the_name_from_a_live_instance(qtbot: QtBot) -> None:
    """A launch whose hand-over was too slow must not remove the running instance's socket
    (that would make two windows and leave the first deaf to later launches)."""
    name = f"qoder-desktop-test-{uuid.uuid4().hex[:8]}"
    first = InstanceServer(name)
    second = InstanceServer(name)
    try:
        assert first.listening and not second.listening
        received: list[dict[str, object]] = []
        first.message_received.connect(received.append)
        assert hand_over(name, {"action": "front"})
        qtbot.waitUntil(lambda: received == [{"action": "front"}])
    finally:
        second.close()
        first.close()


def test_a_long_temporary_folder_still_gives_one_instance(
        qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a $TMPDIR too long for a Unix socket path, hand-over still works."""
    long_tmp = tmp_path / ("t" * 90)
    long_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(long_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads $TMPDIR again
    name = server_name(str(tmp_path / f"data-{uuid.uuid4().hex[:8]}"))
    assert len(os.fsencode(name)) <= 100
    server = InstanceServer(name)
    try:
        assert server.listening
        received: list[dict[str, object]] = []
        server.message_received.connect(received.append)
        assert hand_over(name, {"action": "front"})
        qtbot.waitUntil(lambda: received == [{"action": "front"}])
    finally:
        server.close()


def test_a_socket_file_a_crashed_instance_left_is_taken_over(qtbot: QtBot, tmp_path: Path) -> None:
    import socket

    name = str(tmp_path / "left-behind")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(name)  # the file exists, nobody listens on it
    stale.close()
    server = InstanceServer(name)
    try:
        assert server.listening
        with qtbot.waitSignal(server.message_received, timeout=3000) as received:
            assert hand_over(name, {"action": "front"})
        assert received.args == [{"action": "front"}]
    finally:
        server.close()


def test_only_the_user_can_reach_the_server_and_its_file_goes_with_it(
        qtbot: QtBot, tmp_path: Path) -> None:
    name = str(tmp_path / "instance")
    server = InstanceServer(name)
    try:
        assert os.stat(name).st_mode & 0o077 == 0
        assert [entry.name for entry in tmp_path.iterdir()] == ["instance"]  # no folder left
    finally:
        server.close()
    assert not os.path.exists(name)
    assert hand_over(name, {"action": "front"}) is False


def test_an_oversized_or_malformed_hand_over_is_dropped_and_the_next_one_arrives(
        qtbot: QtBot, tmp_path: Path) -> None:
    import socket

    from qoder_desktop.ui.single_instance import MAX_MESSAGE_BYTES

    name = str(tmp_path / "instance")
    server = InstanceServer(name)
    received: list[dict[str, object]] = []
    server.message_received.connect(received.append)
    cut_off: list[bool] = []

    def send_too_much() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as flood:
            flood.connect(name)
            try:
                flood.sendall(b"x" * (4 * MAX_MESSAGE_BYTES))  # no newline, ever
                flood.shutdown(socket.SHUT_WR)
                cut_off.append(flood.recv(1) == b"")
            except OSError:  # the server closed it while it was sending
                cut_off.append(True)

    try:
        flood = threading.Thread(target=send_too_much)
        flood.start()
        qtbot.waitUntil(lambda: cut_off == [True], timeout=10_000)
        flood.join(timeout=10)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as garbled:
            garbled.connect(name)
            garbled.sendall(b"{not json\n")
        assert hand_over(name, {"action": "front"})
        qtbot.waitUntil(lambda: received == [{"action": "front"}])
        assert received == [{"action": "front"}]
    finally:
        server.close()


def test_serving_hand_overs_loads_no_qtnetwork(tmp_path: Path) -> None:
    """On Unix the server is a plain socket: QtNetwork (~3 MB) is never loaded for it."""
    import subprocess
    import sys

    code = """if True:
        import json, sys
        from PySide6.QtCore import QCoreApplication, QTimer
        from qoder_desktop.ui.single_instance import InstanceServer, hand_over
        app = QCoreApplication([])
        server = InstanceServer(sys.argv[1])
        got = []
        server.message_received.connect(lambda m: (got.append(m), app.quit()))
        QTimer.singleShot(0, lambda: hand_over(sys.argv[1], {"action": "front"}))
        QTimer.singleShot(20000, app.quit)
        app.exec()
        server.close()
        print(json.dumps([got, sorted(m for m in sys.modules if "QtNetwork" in m)]))
    """
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "instance")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '[[{"action": "front"}], []]'


def test_without_a_running_instance_the_launch_goes_ahead() -> None:
    assert hand_over(f"qoder-desktop-nobody-{uuid.uuid4().hex[:8]}", {"action": "show"}) is False


def test_the_socket_name_is_per_data_folder(tmp_path: Path) -> None:
    assert server_name(str(tmp_path / "a")) != server_name(str(tmp_path / "b"))
    assert server_name(str(tmp_path / "a")) == server_name(str(tmp_path / "a" / "."))


class _Window:
    def __init__(self) -> None:
        self.status: list[str] = []

    def bring_to_front(self) -> None:
        self.status.append("front")

    def show_status(self, text: str) -> None:
        self.status.append(text)


def test_a_handed_over_session_starts_in_the_second_launchs_folder(tmp_path: Path) -> None:
    started: list[SessionOptions] = []
    desktop: Any = SimpleNamespace(window=_Window(), start_session=started.append,
                                   settings=SimpleNamespace(default_backend=Backend.CLAUDE))
    message = {"action": "start", "cwd": str(tmp_path),
               "argv": ["--backend", "qoder", "--prompt", "Add tests", "--cwd", "proj",
                        "--add-dir", "data", "--permission-mode", "plan"]}
    start_up_module.on_handover(message, desktop)
    [options] = started
    assert options.backend is Backend.QODER
    assert options.prompt == "Add tests"
    assert options.cwd == str(tmp_path / "proj")
    assert options.add_dirs == [str(tmp_path / "data")]
    assert options.permission_mode is PermissionMode.PLAN
    assert desktop.window.status[0] == "front"


def test_a_handed_over_demo_starts_in_a_fresh_scratch_folder(tmp_path: Path) -> None:
    from qoder_desktop.agents.factory import DemoModel

    started: list[SessionOptions] = []
    desktop: Any = SimpleNamespace(window=_Window(), start_session=started.append)
    demo = DemoModel("http://127.0.0.1:9", root=tmp_path / "demo")
    first_workspace = demo.workspace
    for _ in range(2):
        start_up_module.on_handover({"action": "demo", "scenario": "write_edit", "prompt": ""},
                                desktop, demo)
    assert [o.scenario for o in started] == ["write_edit", "write_edit"]
    assert [o.name for o in started] == ["Demo (write_edit)"] * 2
    folders = {o.cwd for o in started}
    assert len(folders) == 2 and str(first_workspace) not in folders
    for folder in folders:
        assert Path(folder).parent == demo.root and not any(Path(folder).iterdir())


def test_a_demo_handed_to_an_app_without_demo_starts_nothing_and_says_why() -> None:
    started: list[SessionOptions] = []
    desktop: Any = SimpleNamespace(window=_Window(), start_session=started.append)
    start_up_module.on_handover({"action": "demo", "scenario": "bash"}, desktop, None)
    assert started == []
    assert "runs without --demo" in desktop.window.status[-1]


def test_a_socket_file_a_crashed_instance_left_is_not_a_running_instance(
        tmp_path: Path) -> None:
    import socket

    path = str(tmp_path / "left-behind")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # the file exists, nobody listens on it
    stale.close()
    assert os.path.exists(path)
    assert hand_over(path, {"action": "show"}) is False


def test_only_one_launch_holds_a_data_folders_instance_lock(tmp_path: Path) -> None:
    """The lock is taken before the first paint, long before the server listens."""
    first = claim_instance(tmp_path)
    assert first is not None
    assert (tmp_path / "instance.lock").stat().st_mode & 0o077 == 0  # private, like the data
    assert claim_instance(tmp_path) is None  # a second launch sees the first one starting
    first.release()
    again = claim_instance(tmp_path)
    assert again is not None  # released: the next launch is the app
    again.release()


def test_the_lock_of_a_process_that_ended_is_free(tmp_path: Path) -> None:
    """A crashed instance never leaves a stale lock: the system drops it with the process."""
    import subprocess
    import sys

    code = ("import sys, pathlib; from qoder_desktop.ui.single_instance import claim_instance;"
            "lock = claim_instance(pathlib.Path(sys.argv[1])); print(lock is not None);"
            "import os; os._exit(3)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 3 and done.stdout.strip() == "True", done.stderr
    lock = claim_instance(tmp_path)
    assert lock is not None
    lock.release()


def test_a_launch_during_anothers_start_up_hands_over_once_its_server_listens(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first launch's server comes after its paint: the second waits for it, and its
    request reaches the first instance instead of opening a second app."""
    from qoder_desktop.ui import single_instance

    name = f"qoder-desktop-test-{uuid.uuid4().hex[:8]}"
    tries: list[bool] = []
    hand_over = single_instance.hand_over

    def counted(*args: Any) -> bool:
        tries.append(handed := hand_over(*args))
        return handed

    monkeypatch.setattr(single_instance, "hand_over", counted)
    results: list[bool] = []
    waiting = threading.Thread(target=lambda: results.append(
        hand_over_when_ready(name, {"action": "front"}, timeout_s=30)))
    waiting.start()
    qtbot.waitUntil(lambda: len(tries) >= 2)  # the second launch is waiting …
    assert tries[:2] == [False, False]  # … nobody listens yet …
    assert waiting.is_alive() and results == []  # … and it has not given up
    server = InstanceServer(name)
    try:
        with qtbot.waitSignal(server.message_received, timeout=10_000) as received:
            pass
        assert received.args == [{"action": "front"}]
        waiting.join(timeout=10)
        assert results == [True]
    finally:
        server.close()


def test_a_launch_waiting_for_a_server_that_never_comes_gives_up() -> None:
    name = f"qoder-desktop-test-{uuid.uuid4().hex[:8]}"
    assert hand_over_when_ready(name, {"action": "front"}, timeout_s=0.3) is False


def test_a_held_lock_excludes_other_launches_until_released(tmp_path: Path) -> None:
    lock = claim_instance(tmp_path)
    assert lock is not None and lock.excludes_others
    assert claim_instance(tmp_path) is None  # a second launch on the same data
    lock.release()
    assert not lock.excludes_others
    again = claim_instance(tmp_path)
    assert again is not None and again.excludes_others
    again.release()
