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
from helpers.notification_server import (
    NotifyCall,
    ServerThread,
    StandIn,
    dbus_daemon,
    private_bus,
)

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


def test_a_process_that_takes_the_notification_service_over_cannot_allow_in_the_app(
        display: dict[str, str], tmp_path: Path) -> None:
    home = tmp_path / "app-home"
    app_home(home, notifications={"only_when_inactive": False})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    log_file = tmp_path / "app-output.txt"

    def ignored() -> int:
        return log_file.read_text(errors="replace").count("ignored the action 'allow'")

    with private_bus(tmp_path / "bus") as address:
        notifications = ServerThread(address)
        env = dict(display, QODER_DESKTOP_HOME=str(home), TMPDIR=str(scratch),
                   HOME=str(tmp_path / "home"), DBUS_SESSION_BUS_ADDRESS=address)
        with log_file.open("w") as output:
            app = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo",
                                    "--scenario", "bash"], env=env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        stand_in: StandIn | None = None
        try:
            call = wait_for(lambda: next((c for c in notifications.server.notified
                                          if c.summary.endswith("wants approval")), None),
                            90, "the demo's approval notification")
            time.sleep(2.0)  # well past the 400 ms arming delay: a press would act
            stand_in = StandIn(address)  # ends the server's ownership, takes the name
            wait_for(lambda: stand_in is not None and stand_in.ready, 30, "the stand-in")
            for notification_id in range(call.notification_id, call.notification_id + 3):
                stand_in.click(notification_id, "allow")  # it guesses ids
            stand_in.sync()  # the bus routed those clicks before anything sent from now
            wait_for(lambda: stand_in is not None and stand_in.synced == 1, 30, "the clicks")
            notifications.call(notifications.server.click, call.notification_id, "allow")
            # The app reads its messages in order: the replaced server's press, which it
            # logs as ignored, comes after the stand-in's (ignored quietly: they name no
            # notification of ours that the new owner showed).
            wait_for(lambda: ignored() >= 1, 30, "the app to ignore the replaced server")
            with sqlite3.connect(home / "data" / "qoder-desktop.sqlite3") as db:
                rows = db.execute("SELECT tool_name, outcome FROM approvals").fetchall()
            assert rows == [("Bash", None)]  # still the person's to answer
        finally:
            stop_group(app, timeout=15)
            if stand_in is not None:
                stand_in.stop()
            notifications.stop()
    assert not list(scratch.glob("qoder-desktop-demo-*/workspace/hello.txt"))
    text = log_file.read_text(errors="replace")
    assert "Traceback" not in text, text
