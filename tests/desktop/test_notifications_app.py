"""The real app answers from a desktop notification: ``qoder-desktop --demo`` under Xvfb
with a private session bus and the test notification server on it; the demo's Bash call
is allowed by pressing the notification's "Allow once", and the command really runs."""

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
from helpers.desktop import stop_group, wait_for, xvfb_display
from helpers.notification_server import NotifyCall, ServerThread, dbus_daemon, private_bus

pytestmark = [
    pytest.mark.slow,
    pytest.mark.e2e,
    pytest.mark.skipif(dbus_daemon() is None or shutil.which("Xvfb") is None,
                       reason="needs Xvfb and dbus-daemon (see .ci/run)"),
]


@pytest.fixture
def display() -> Iterator[dict[str, str]]:
    """A private Xvfb display (no window manager, no tray)."""
    with xvfb_display("1366x768x24") as env:
        yield env


def test_the_demo_request_is_allowed_from_its_notification(display: dict[str, str],
                                                           tmp_path: Path) -> None:
    home = tmp_path / "app-home"
    app_home(home, notifications={"only_when_inactive": False})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with private_bus(tmp_path / "bus") as address:
        notifications = ServerThread(address)
        env = dict(display, QODER_DESKTOP_HOME=str(home), TMPDIR=str(scratch),
                   HOME=str(tmp_path / "home"), DBUS_SESSION_BUS_ADDRESS=address)
        log_file = tmp_path / "app-output.txt"
        with log_file.open("w") as output:
            app = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo",
                                    "--scenario", "bash"], env=env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            def approval() -> NotifyCall | None:
                calls = [c for c in notifications.server.notified
                         if c.summary.endswith("wants approval")]
                return calls[0] if calls else None

            call = wait_for(approval, 90, "the demo's approval notification")
            assert call.app_name == "Qoder Desktop"
            assert call.body == "echo hello &gt; hello.txt"
            assert ("allow", "Allow once") in call.action_pairs()
            time.sleep(2.0)  # well past the 400 ms arming delay
            notifications.call(notifications.server.click, call.notification_id, "allow")
            [workspace] = wait_for(lambda: list(scratch.glob("qoder-desktop-demo-*/workspace")),
                                    30, "the demo workspace")
            hello = workspace / "hello.txt"
            # The shell creates the file before echo writes into it: wait for its text.
            wait_for(lambda: hello.exists() and hello.read_text() == "hello\n", 60,
                      "the allowed command to run")
            with sqlite3.connect(home / "data" / "qoder-desktop.sqlite3") as db:
                rows = db.execute("SELECT tool_name, outcome, decided_by FROM approvals "
                                  "ORDER BY seq").fetchall()
            assert rows[0] == ("Bash", "allow_once", "user")
        finally:
            stop_group(app, timeout=15)
            notifications.stop()
    text = log_file.read_text(errors="replace")
    assert "Traceback" not in text, text
