"""Two real `qoder-desktop --demo` processes under Xvfb: the second hands its demo to the
first (one window, one tray icon, one gateway), and Ctrl+Q while requests wait asks first
and then denies them with a message the agent sees.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_home import app_home
from helpers.desktop import stop_group, wait_for, windows, xvfb_display

from qoder_desktop.ui.wiring import QUIT_DENY_MESSAGE

TOOLS = ("Xvfb", "trayer", "xdotool")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in TOOLS),
                       reason="needs Xvfb, trayer and xdotool (see .ci/run)"),
]


def _shown(env: dict[str, str], title_regex: str) -> list[str]:
    return windows(env, title_regex, visible_only=True)


def _key(env: dict[str, str], window: str, keys: str) -> None:
    subprocess.run(["xdotool", "windowfocus", "--sync", window], env=env, check=True)
    subprocess.run(["xdotool", "key", "--clearmodifiers", keys], env=env, check=True)


@pytest.fixture
def display() -> Iterator[dict[str, str]]:
    """A private Xvfb display with trayer as the system tray."""
    with xvfb_display(tray=True) as env:
        yield env


def _rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(home / "data" / "qoder-desktop.sqlite3") as db:
        return db.execute(sql).fetchall()


def test_a_second_demo_goes_to_the_running_app_and_ctrl_q_asks_then_denies(
        display: dict[str, str], tmp_path: Path) -> None:
    home, scratch = tmp_path / "app-home", tmp_path / "tmp"
    app_home(home)
    scratch.mkdir()
    env = dict(display, QODER_DESKTOP_HOME=str(home), TMPDIR=str(scratch),
               HOME=str(tmp_path / "home"), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    output = (tmp_path / "first-output.txt").open("w")
    first = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo", "--scenario",
                              "bash"], env=env, stdout=output, stderr=subprocess.STDOUT,
                             start_new_session=True)
    try:
        wait_for(lambda: _shown(env, "^Approve Bash"), 90, "the first demo's dialog")
        [main] = wait_for(lambda: _shown(env, "^Qoder Desktop$"), 30, "the main window")

        second = subprocess.run([sys.executable, "-m", "qoder_desktop", "--demo", "--scenario",
                                 "write_edit"], env=env, capture_output=True, text=True,
                                timeout=60, check=False)
        assert second.returncode == 0, second.stderr
        assert "already running; the demo went to that window" in second.stdout

        def two_sessions() -> list[tuple[object, ...]]:
            rows = _rows(home, "SELECT name, cwd FROM sessions ORDER BY created_at")
            return rows if len(rows) == 2 else []

        (name_1, cwd_1), (name_2, cwd_2) = wait_for(two_sessions, 30, "the handed-over demo")
        assert (name_1, name_2) == ("Demo (bash)", "Demo (write_edit)")
        assert cwd_1 != cwd_2 and Path(str(cwd_2)).parent == Path(str(cwd_1)).parent
        wait_for(lambda: _rows(home, "SELECT 1 FROM approvals WHERE tool_name = 'Write'"),
                  60, "the handed-over demo's Write request")
        assert _shown(env, "^Qoder Desktop$") == [main]  # still one main window
        log_text = (home / "state" / "qoder-desktop.log").read_text()
        assert "gateway is not running" not in log_text
        assert "approval gateway listening" in log_text

        _key(env, main, "ctrl+q")
        [box] = wait_for(lambda: _shown(env, "^Quit Qoder Desktop\\?$"), 30,
                          "the quit question")
        assert first.poll() is None  # asked, not quit
        _key(env, box, "Escape")
        wait_for(lambda: not _shown(env, "^Quit Qoder Desktop\\?$"), 30, "the box to close")
        time.sleep(1.0)
        assert first.poll() is None  # Cancel keeps it running

        _key(env, main, "ctrl+q")
        [box] = wait_for(lambda: _shown(env, "^Quit Qoder Desktop\\?$"), 30,
                          "the quit question again")
        _key(env, box, "alt+q")  # "&Quit and deny"
        assert first.wait(timeout=60) == 0
        decided = _rows(home, "SELECT tool_name, outcome, message FROM approvals ORDER BY seq")
        assert decided == [("Bash", "deny", QUIT_DENY_MESSAGE),
                           ("Write", "deny", QUIT_DENY_MESSAGE)]
    finally:
        if first.poll() is None:
            stop_group(first, timeout=10)
        output.close()


def test_two_demos_launched_at_once_make_one_app(display: dict[str, str],
                                                 tmp_path: Path) -> None:
    """The server listens only after the first paint; a launch in that gap waits for it
    (the data folder's instance lock) instead of opening a second app on the same data."""
    home, scratch = tmp_path / "app-home", tmp_path / "tmp"
    app_home(home)
    scratch.mkdir()
    env = dict(display, QODER_DESKTOP_HOME=str(home), TMPDIR=str(scratch),
               HOME=str(tmp_path / "home"), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    launches = [subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo", "--scenario",
                                  scenario], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, start_new_session=True)
                for scenario in ("bash", "write_edit")]
    try:
        ended = wait_for(lambda: [p for p in launches if p.poll() is not None], 90,
                         "one launch to hand over and end")
        [second] = ended
        [first] = [p for p in launches if p is not second]
        assert second.returncode == 0
        said = second.stdout.read() if second.stdout else ""
        assert "the demo went to that window" in said, said
        rows = wait_for(lambda: (r := _rows(home, "SELECT name FROM sessions")) and len(r) == 2
                        and r, 60, "both demos in the one app")
        assert sorted(name for (name,) in rows) == ["Demo (bash)", "Demo (write_edit)"]
        wait_for(lambda: _shown(env, "^Qoder Desktop$"), 30, "the main window")
        time.sleep(1.0)
        assert len(_shown(env, "^Qoder Desktop$")) == 1 and first.poll() is None
    finally:
        for launch in launches:
            if launch.poll() is None:
                stop_group(launch, timeout=10)
