"""A second launch hands its session to the running instance instead of opening an app."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import Backend, PermissionMode
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.ui import app as app_module
from qoder_desktop.ui.single_instance import InstanceServer, hand_over, server_name


def test_hand_over_reaches_the_running_instance(qtbot: QtBot) -> None:
    name = f"qoder-desktop-test-{uuid.uuid4().hex[:8]}"
    server = InstanceServer(name)
    try:
        with qtbot.waitSignal(server.message_received, timeout=3000) as received:
            assert hand_over(name, {"action": "start", "argv": ["--prompt", "hi"]})
        assert received.args == [{"action": "start", "argv": ["--prompt", "hi"]}]
    finally:
        server.close()


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
    app_module.on_handover(message, desktop)
    [options] = started
    assert options.backend is Backend.QODER
    assert options.prompt == "Add tests"
    assert options.cwd == str(tmp_path / "proj")
    assert options.add_dirs == [str(tmp_path / "data")]
    assert options.permission_mode is PermissionMode.PLAN
    assert desktop.window.status[0] == "front"


def test_a_handed_over_bypass_mode_is_not_started_without_confirmation(
        tmp_path: Path, monkeypatch: Any) -> None:
    started: list[SessionOptions] = []
    asked: list[PermissionMode] = []
    monkeypatch.setattr(app_module, "confirm_dangerous_mode",
                        lambda parent, mode, done: asked.append(mode))
    desktop: Any = SimpleNamespace(window=_Window(), start_session=started.append,
                                   settings=SimpleNamespace(default_backend=Backend.CLAUDE))
    app_module.on_handover({"action": "start", "cwd": str(tmp_path),
                             "argv": ["--backend", "claude", "--prompt", "x",
                                      "--permission-mode", "bypassPermissions"]}, desktop)
    assert asked == [PermissionMode.BYPASS]
    assert started == []
