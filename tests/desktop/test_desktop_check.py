"""The real desktop check: the app under Xvfb with trayer as the tray, answered by real keys.

Runs `qoder-desktop --demo` (the real Claude Code CLI against the scripted model) on a
virtual X display with a system tray, finds the approval dialog by its title, answers it
with xdotool key presses and checks the tool really ran. It saves a screenshot of the
main window with an open approval dialog to `artifacts/desktop-check.png`.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TOOLS = ("Xvfb", "trayer", "xdotool", "import")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in TOOLS),
                       reason="needs Xvfb, trayer, xdotool and ImageMagick (see .ci/run)"),
]


def _wait_for(check, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _windows(display_env: dict[str, str], title_regex: str) -> list[str]:
    found = subprocess.run(["xdotool", "search", "--name", title_regex], env=display_env,
                           capture_output=True, text=True, check=False)
    return found.stdout.split()


@pytest.fixture
def display(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A private Xvfb display with trayer running as the system tray."""
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1600x1000x24",
                             "-nolisten", "tcp"], pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    env = dict(os.environ, DISPLAY=f":{number}")
    env.pop("QT_QPA_PLATFORM", None)
    tray = subprocess.Popen(["trayer", "--edge", "top", "--align", "right", "--height", "24",
                             "--widthtype", "request"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield env
    finally:
        for process in (tray, xvfb):
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


def test_demo_request_answered_by_real_key_presses(display: dict[str, str],
                                                   tmp_path: Path) -> None:
    home = tmp_path / "app-home"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(display, QODER_DESKTOP_HOME=str(home), TMPDIR=str(scratch),
               HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="xcb")
    log_file = tmp_path / "app-output.txt"
    with log_file.open("w") as output:
        app = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo"], env=env,
                               stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        [dialog] = _wait_for(lambda: _windows(env, "^Approve Bash"), 60,
                             "the approval dialog (app output: see app-output.txt)")
        _wait_for(lambda: _windows(env, "^Qoder Desktop"), 10, "the main window")
        time.sleep(1.0)  # let the window manager-less screen settle before the screenshot
        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / "desktop-check.png"
        subprocess.run(["import", "-window", "root", str(shot)], env=env, check=True)
        assert shot.stat().st_size > 10_000

        subprocess.run(["xdotool", "windowfocus", "--sync", dialog], env=env, check=True)
        subprocess.run(["xdotool", "key", "--clearmodifiers", "ctrl+Return"], env=env,
                       check=True)
        [workspace] = _wait_for(lambda: list(scratch.glob("qoder-desktop-demo-*/workspace")),
                                10, "the demo workspace")
        hello = workspace / "hello.txt"
        _wait_for(hello.exists, 30, "the allowed command to run")
        assert hello.read_text() == "Hello from the demo\n"

        # The next request (a Write) now waits for a person: nothing answers it by itself.
        _wait_for(lambda: _windows(env, "^Approve Write"), 30, "the next approval dialog")
        time.sleep(1.5)
        assert not (workspace / "notes.md").exists()

        log_text = (home / "state" / "qoder-desktop.log").read_text()
        assert "system tray available: True" in log_text
        with sqlite3.connect(home / "data" / "qoder-desktop.sqlite3") as db:
            rows = db.execute("SELECT tool_name, outcome, decided_by FROM approvals "
                              "ORDER BY seq").fetchall()
        assert rows[0] == ("Bash", "allow_once", "user")
        assert rows[1][:2] == ("Write", None)
    finally:
        os.killpg(app.pid, signal.SIGTERM)
        try:
            app.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(app.pid, signal.SIGKILL)
            app.wait()
