"""The real `qoder-desktop --demo` process under Xvfb: after a demo request is answered,
View → History (Ctrl+H) opens the history window."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.app_home import app_home
from helpers.desktop import stop_group, wait_for, windows, xvfb_display

TOOLS = ("Xvfb", "xdotool")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in TOOLS),
                       reason="needs Xvfb and xdotool (see .ci/run)"),
]


def _key(env: dict[str, str], window: str, keys: str) -> None:
    subprocess.run(["xdotool", "windowfocus", "--sync", window], env=env, check=False)
    subprocess.run(["xdotool", "key", "--clearmodifiers", keys], env=env, check=False)


def test_the_history_window_opens_from_the_view_menu_after_a_demo_decision(
        tmp_path: Path) -> None:
    home, scratch = tmp_path / "app-home", tmp_path / "tmp"
    app_home(home)
    scratch.mkdir()
    with xvfb_display() as display:
        env = dict(display, QODER_DESKTOP_HOME=str(home), TMPDIR=str(scratch),
                   HOME=str(tmp_path / "home"),
                   PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
        output = (tmp_path / "output.txt").open("w")
        app = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo", "--scenario",
                                "bash"], env=env, stdout=output, stderr=subprocess.STDOUT,
                               start_new_session=True)
        try:
            [dialog] = wait_for(lambda: windows(env, "^Approve Bash", visible_only=True), 90,
                                "the demo's dialog")

            def decided() -> list[tuple[object, ...]]:
                with sqlite3.connect(home / "data" / "qoder-desktop.sqlite3") as db:
                    return db.execute("SELECT outcome, decided_by FROM approvals "
                                      "WHERE outcome IS NOT NULL").fetchall()

            def deny() -> list[tuple[object, ...]]:
                # The person denies with Escape (never ignored), once the dialog has armed.
                rows = decided()
                if not rows:
                    _key(env, dialog, "Escape")
                return rows

            assert wait_for(deny, 60, "the decision in the ledger")[0] == ("deny", "user")
            [main] = wait_for(lambda: windows(env, "^Qoder Desktop$", visible_only=True), 30,
                              "the main window")
            _key(env, main, "ctrl+h")
            wait_for(lambda: windows(env, "^Decision history", visible_only=True), 30,
                     "the history window")
            assert app.poll() is None
        finally:
            if app.poll() is None:
                stop_group(app, timeout=10)
            output.close()
