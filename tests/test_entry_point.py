"""The real `python -m qoder_desktop` entry point where there is no display."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qoder_desktop.__main__ import NO_DISPLAY_EXIT, missing_display


def _run_without_display(tmp_path: Path, *args: str,
                         **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(QODER_DESKTOP_HOME=str(tmp_path / "home"), **extra)
    return subprocess.run([sys.executable, "-m", "qoder_desktop", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("platform", [None, "xcb"])
def test_demo_without_a_display_says_so_and_how_to_fix_it(tmp_path: Path,
                                                          platform: str | None) -> None:
    extra = {"QT_QPA_PLATFORM": platform} if platform else {}
    run = _run_without_display(tmp_path, "--demo", **extra)
    assert run.returncode == NO_DISPLAY_EXIT != 0
    assert "no display found" in run.stderr
    assert "DISPLAY" in run.stderr and "xvfb-run" in run.stderr and "ssh -X" in run.stderr
    assert "xcb-cursor" not in run.stderr and "Aborted" not in run.stderr
    assert not (tmp_path / "home").exists()  # nothing was started


def test_commands_that_need_no_window_still_run_without_a_display(tmp_path: Path) -> None:
    run = _run_without_display(tmp_path, "ledger", "export")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("entry_type,")


def test_which_environments_have_a_display() -> None:
    assert missing_display({}, "linux") is not None
    assert missing_display({"DISPLAY": ":0"}, "linux") is None
    assert missing_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert missing_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert missing_display({"QT_QPA_PLATFORM": "wayland"}, "linux") is not None
    assert missing_display({}, "darwin") is None and missing_display({}, "win32") is None
