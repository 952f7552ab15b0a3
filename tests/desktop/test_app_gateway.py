"""The approval gateway through the real app (which runs on qasync): ``qoder-desktop`` under Xvfb,
the real Claude Code CLI in a "terminal" with the flags "Connect an Agent…" shows, and
the dialog answered by real key presses (xdotool).

The app runs with a private QODER_DESKTOP_HOME/HOME, the ``fail`` keyring (which the app
refuses, so it never touches a real keyring) and its gateway token from
``QODER_DESKTOP_GATEWAY_TOKEN`` (the documented fallback without a keyring), on a free
port written to its settings file. The CLI talks only to the scripted model and the
gateway, both on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import claude_agent_sdk
import pytest
from helpers.app_home import app_home
from helpers.desktop import person_keys, stop_group, wait_for, xvfb_display

from qoder_desktop.gateway.contract import (
    GATEWAY_TOKEN_ENV,
    PERMISSION_PROMPT_TOOL,
    gateway_url,
    mcp_config,
)
from qoder_desktop.scripted_model import ThreadedScriptedModel, build_cli_env

TOKEN = "app-e2e-gateway-token-0123456789abcdef"
BUNDLED_CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
TIMEOUT = 60.0
ARMING = 1.0
"""Longer than the dialogs' 400 ms arming delay, so the keys are not ignored."""

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("Xvfb", "Xephyr", "xdotool")),
                       reason="needs Xvfb, Xephyr and xdotool (see .ci/run)"),
    pytest.mark.skipif(not BUNDLED_CLI.exists(), reason="bundled Claude Code CLI not installed"),
]

T = TypeVar("T")


def _wait_for(check: Callable[[], T], what: str, timeout: float = TIMEOUT) -> T:
    return wait_for(check, timeout, what)


@dataclass
class App:
    """The running app: its process, X display, folders and gateway."""

    process: subprocess.Popen[bytes]
    env: dict[str, str]
    home: Path
    url: str

    def windows(self, title_regex: str) -> list[str]:
        """X window ids whose title matches."""
        found = subprocess.run(["xdotool", "search", "--name", title_regex], env=self.env,
                               capture_output=True, text=True, check=False)
        return found.stdout.split()

    def press(self, window: str, keys: str) -> None:
        """Focus `window` and press `keys` there, as a person would."""
        person_keys(self.env, window, keys)

    def ledger(self) -> list[tuple[str, str | None, str | None]]:
        """(tool, outcome, decided_by) of every approval the app recorded, oldest first."""
        with sqlite3.connect(self.home / "data" / "qoder-desktop.sqlite3") as db:
            return db.execute("SELECT tool_name, outcome, decided_by FROM approvals "
                              "ORDER BY seq").fetchall()

    def log(self) -> str:
        """The app's log file."""
        return (self.home / "state" / "qoder-desktop.log").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def display() -> Iterator[dict[str, str]]:
    """A private display (no window manager, no tray: the window shows the count) with a
    keyboard whose keys reach the app as a person's (a nested Xephyr)."""
    with xvfb_display(person=True) as env:
        yield env


@pytest.fixture(scope="module")
def app(display: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """``python -m qoder_desktop`` as a person starts it, with its gateway on a free port."""
    root = tmp_path_factory.mktemp("app")
    home = root / "qoder-desktop"
    user_home = root / "home"
    scratch = root / "tmp"
    for folder in (user_home, scratch, home / "config"):
        folder.mkdir(parents=True)
    port = app_home(home)
    env = dict(display, QODER_DESKTOP_HOME=str(home), HOME=str(user_home),
               USERPROFILE=str(user_home), TMPDIR=str(scratch),
               XDG_CONFIG_HOME=str(user_home / ".config"),
               XDG_DATA_HOME=str(user_home / ".local/share"),
               XDG_STATE_HOME=str(user_home / ".local/state"),
               XDG_CACHE_HOME=str(user_home / ".cache"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
               **{GATEWAY_TOKEN_ENV: TOKEN})
    for var in ("QODER_PERSONAL_ACCESS_TOKEN", "ANTHROPIC_API_KEY"):
        env.pop(var, None)
    output = (root / "app-output.txt").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "qoder_desktop"], env=env,
                               stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    running = App(process, env, home, gateway_url(port))
    try:
        _wait_for(lambda: process.poll() is not None or
                  f"approval gateway listening on {running.url}" in _read(home),
                  "the app's gateway")
        assert process.poll() is None, (root / "app-output.txt").read_text()
        yield running
    finally:
        if process.poll() is None:
            stop_group(process, timeout=10)
        output.close()
        text = (root / "app-output.txt").read_text(errors="replace")
        assert "OverflowError" not in text and "Traceback" not in text, text


def _read(home: Path) -> str:
    try:
        return (home / "state" / "qoder-desktop.log").read_text(encoding="utf-8")
    except OSError:
        return ""



@dataclass
class Terminal:
    """A terminal where a person runs ``claude -p`` with the gateway's flags."""

    app: App
    model: ThreadedScriptedModel
    workspace: Path
    config_dir: Path

    def start(self, token: str) -> subprocess.Popen[bytes]:
        """``claude -p … --permission-prompt-tool … --mcp-config qoder-desktop.json``."""
        config_file = self.workspace.parent / "qoder-desktop.json"
        config_file.write_text(json.dumps(mcp_config(self.app.url, token)), encoding="utf-8")
        env = {**os.environ, **build_cli_env(self.model.base_url, self.config_dir,
                                             scenario="bash")}
        return subprocess.Popen(
            [str(BUNDLED_CLI), "-p", "Go ahead.", "--permission-prompt-tool",
             PERMISSION_PROMPT_TOOL, "--mcp-config", str(config_file), "--strict-mcp-config",
             "--setting-sources", "", "--output-format", "json"],
            cwd=self.workspace, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)

    @staticmethod
    def finish(process: subprocess.Popen[bytes]) -> tuple[int, str, str]:
        """Wait (bounded) for the CLI; (returncode, stdout, stderr). Killed if it hangs."""
        try:
            out, err = process.communicate(timeout=TIMEOUT)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
        return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


@pytest.fixture
def terminal(app: App, scripted_model: ThreadedScriptedModel,
             tmp_path: Path) -> Iterator[Terminal]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    yield Terminal(app, scripted_model, workspace, tmp_path / "claude-config")
    assert app.process.poll() is None, "the app died"
    _wait_for(lambda: not app.windows("^Approve"), "no approval dialog left open", 10)


def _dialog(app: App) -> str:
    [window] = _wait_for(lambda: app.windows("^Approve Bash"), "the approval dialog")
    time.sleep(ARMING)
    return window


def test_allowed_in_the_app_the_command_runs(app: App, terminal: Terminal) -> None:
    before = len(app.ledger())
    process = terminal.start(TOKEN)
    try:
        app.press(_dialog(app), "ctrl+Return")
    finally:
        code, out, err = terminal.finish(process)
    assert code == 0, err
    assert (terminal.workspace / "hello.txt").read_text() == "hello\n"
    assert json.loads(out)["result"] == 'Created hello.txt with the text "hello".'
    assert app.ledger()[before:] == [("Bash", "allow_once", "user")]


def test_denied_in_the_app_the_command_does_not_run(app: App, terminal: Terminal) -> None:
    before = len(app.ledger())
    process = terminal.start(TOKEN)
    try:
        app.press(_dialog(app), "Escape")
    finally:
        code, out, err = terminal.finish(process)
    assert code == 0, err
    assert not (terminal.workspace / "hello.txt").exists()
    assert json.loads(out)["permission_denials"][0]["tool_name"] == "Bash"
    assert app.ledger()[before:] == [("Bash", "deny", "user")]


def test_a_wrong_token_is_refused_and_the_cli_says_so(app: App, terminal: Terminal) -> None:
    before = len(app.ledger())
    code, _, err = terminal.finish(terminal.start("not-the-token"))
    assert code != 0
    assert f"{PERMISSION_PROMPT_TOOL} (passed via --permission-prompt-tool) not found" in err
    assert not (terminal.workspace / "hello.txt").exists()
    assert app.windows("^Approve") == []
    assert len(app.ledger()) == before
    assert "refused" in app.log() and "not-the-token" not in app.log()


def test_a_killed_cli_closes_its_dialog_and_the_app_lives_on(app: App,
                                                              terminal: Terminal) -> None:
    before = len(app.ledger())
    process = terminal.start(TOKEN)
    try:
        _dialog(app)
        os.killpg(process.pid, signal.SIGKILL)
        _wait_for(lambda: not app.windows("^Approve"), "the dialog to close")
    finally:
        terminal.finish(process)
    assert app.process.poll() is None
    assert not (terminal.workspace / "hello.txt").exists()
    # The withdrawal's row is written after its dialog closes (nothing waits for it).
    _wait_for(lambda: app.ledger()[before:] == [("Bash", "withdrawn", "withdrawn")],
              "the withdrawal in the ledger")
    assert app.windows("^Qoder Desktop") != []
