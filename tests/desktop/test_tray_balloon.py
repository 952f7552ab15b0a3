"""Qt's own tray balloon on a real X display with a tray (Xvfb + trayer): it shows the
command as written, from its start, and it goes away when its request is answered."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.desktop import xvfb_display

pytestmark = pytest.mark.skipif(any(shutil.which(t) is None for t in ("Xvfb", "trayer")),
                                reason="needs Xvfb and trayer (see .ci/run)")
CHILD = Path(__file__).with_name("balloon_child.py")


@pytest.fixture
def display() -> Iterator[dict[str, str]]:
    """A private Xvfb display with trayer as the tray; no session bus (Qt's own balloon)."""
    with xvfb_display("1366x768x24", tray=True, tray_args=(), session_bus=False) as env:
        yield env


def test_the_balloon_shows_the_command_as_written_and_leaves_with_its_request(
        display: dict[str, str]) -> None:
    command = "sleep 2 && echo finished > slow.txt"
    result = subprocess.run([sys.executable, str(CHILD), command], env=display,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["texts"] == ["Bash in slow wants approval", command]
    assert report["after"] == 0
