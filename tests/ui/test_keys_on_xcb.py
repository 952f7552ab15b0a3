"""The key-handling view tests again, on Qt's `xcb` platform under a private Xvfb.

Offscreen Qt is not a desktop: on X11 a line edit takes Ctrl+E, Ctrl+A, Ctrl+K … as
editing keys, so a dialog shortcut that passes offscreen can do nothing on a real
display. These run the dialog modules in a child pytest on `xcb` (a fresh Xvfb found
through `-displayfd`, so no fixed display number). Skipped only when Xvfb is missing;
CI installs it (.ci/run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.desktop import xvfb_display as desktop_display

HERE = Path(__file__).resolve().parent
KEY_MODULES = ("test_approval_dialog.py", "test_question_dialog.py", "test_plan_dialog.py",
               "test_dialog_fit.py", "test_huge_input.py", "test_dialog_spares.py",
               "test_spare_first_frame.py", "test_marked_dialog.py", "test_injected_input.py",
               "test_window_fit.py", "test_new_session_keys.py", "test_help_menu.py",
               "test_transcript_folds.py", "test_approval_edited_rule.py",
               "test_dialog_decision.py", "dialogs/test_chords.py",
               "dialogs/test_question_box.py", "widgets/test_mode_switch.py",
               "test_spare_editor_text.py",
               "windows/test_pairing_dialog.py")
"""The view tests that drive dialogs by keys (and their layout on a real screen), and the
ones that inject X11 input with XTEST (`xdotool`)."""
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (see .ci/run)"),
]


@pytest.fixture
def xvfb_display() -> Iterator[str]:
    """A private Xvfb display (1366×768, the smallest screen dialogs must fit); its name."""
    with desktop_display("1366x768x24") as env:
        assert env["DISPLAY"] != ":", "Xvfb did not report a display number"
        yield env["DISPLAY"]


def test_key_handling_view_tests_pass_on_xcb(xvfb_display: str) -> None:
    env = dict(os.environ, DISPLAY=xvfb_display, QT_QPA_PLATFORM="xcb")
    env.pop("WAYLAND_DISPLAY", None)
    modules = [str(HERE / name) for name in KEY_MODULES if (HERE / name).exists()]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          *modules], env=env, cwd=HERE.parents[1],
                         capture_output=True, text=True, timeout=280, check=False)
    summary = run.stdout.strip().splitlines()[-1:] or ["(no output)"]
    assert run.returncode == 0, f"on xcb: {summary[0]}\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    assert "passed" in summary[0] and "skipped" not in summary[0], summary[0]


def test_the_child_really_runs_on_xcb(xvfb_display: str) -> None:
    """The child pytest's Qt uses xcb (not a silent fallback to offscreen)."""
    env = dict(os.environ, DISPLAY=xvfb_display, QT_QPA_PLATFORM="xcb")
    probe = ("from PySide6.QtWidgets import QApplication; app = QApplication([]); "
             "print(app.platformName())")
    run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.stdout.strip() == "xcb", run.stderr
