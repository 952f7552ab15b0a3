"""Qt's own tray balloon on a real X display with a tray (Xvfb + trayer): it shows the
command as written, from its start, and it goes away when its request is answered."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(any(shutil.which(t) is None for t in ("Xvfb", "trayer")),
                                reason="needs Xvfb and trayer (see .ci/run)")
CHILD = Path(__file__).with_name("balloon_child.py")


@pytest.fixture
def display() -> Iterator[dict[str, str]]:
    """A private Xvfb display with trayer as the tray; no session bus (Qt's own balloon)."""
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1366x768x24",
                             "-nolisten", "tcp"], pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    env = dict(os.environ, DISPLAY=f":{number}", QT_QPA_PLATFORM="xcb")
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    tray = subprocess.Popen(["trayer", "--edge", "top", "--align", "right", "--height", "24"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield env
    finally:
        for process in (tray, xvfb):
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


def test_the_balloon_shows_the_command_as_written_and_leaves_with_its_request(
        display: dict[str, str]) -> None:
    command = "sleep 2 && echo finished > slow.txt"
    result = subprocess.run([sys.executable, str(CHILD), command], env=display,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["texts"] == ["Bash in slow wants approval", command]
    assert report["after"] == 0
