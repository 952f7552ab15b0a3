"""The real desktop check: the app under Xvfb with trayer as the tray, answered by real keys.

Runs `qoder-desktop --demo` (the real Claude Code CLI against the scripted model) on a
virtual X display with a system tray, finds each dialog by its title and answers it with
key presses from the display's keyboard, as a person would (the app runs in a nested
Xephyr and xdotool types on the outer display: keys injected on the app's own display
never approve, see tests/ui/test_injected_input.py), checking what the CLI really did:

1. Bash: Ctrl+Return allows it; the command ran.
2. Write: Ctrl+E (focus starts in the deny reason, which on X11 would take Ctrl+E as
   "end of line"), Ctrl+A and typing replace the JSON; Ctrl+Return allows; the file holds
   the EDITED content.
3. Edit: Escape denies; the file is unchanged.
4. The question: the digit 2 picks the second option; Ctrl+Return submits it.

It saves screenshots of the main window with an open dialog to `artifacts/`
(`desktop-check.png` for the first approval, `desktop-check-edit.png` for the diff of
the Edit, which is the README's docs/screenshot.png).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_home import app_home
from helpers.desktop import (
    person_keys,
    person_type,
    stop_group,
    wait_for,
    windows,
    xvfb_display,
)

TOOLS = ("Xvfb", "Xephyr", "trayer", "xdotool", "import")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in TOOLS),
                       reason="needs Xvfb, Xephyr, trayer, xdotool and ImageMagick (see .ci/run)"),
]


def _key(env: dict[str, str], window: str, *keys: str) -> None:
    """Focus `window` and press `keys` (xdotool names), after the dialog's arming delay."""
    time.sleep(0.8)  # the dialog arms 400 ms after it appears
    person_keys(env, window, *keys)


def _ledger(home: Path) -> list[tuple]:
    with sqlite3.connect(home / "data" / "qoder-desktop.sqlite3") as db:
        return db.execute("SELECT tool_name, outcome, decided_by, original_input_json, "
                          "final_input_json FROM approvals ORDER BY seq").fetchall()


def _screenshot(env: dict[str, str], name: str) -> Path:
    time.sleep(1.0)  # let the window manager-less screen settle before the screenshot
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / name
    subprocess.run(["import", "-window", "root", str(shot)], env=env, check=True)
    assert shot.stat().st_size > 10_000
    return shot


@pytest.fixture
def display() -> Iterator[dict[str, str]]:
    """A private display with trayer running as the system tray, and a keyboard whose keys
    reach the app as a person's (a nested Xephyr: see `xvfb_display`)."""
    with xvfb_display(tray=True, person=True) as env:
        yield env


def test_demo_request_answered_by_real_key_presses(display: dict[str, str],
                                                   tmp_path: Path) -> None:
    home = tmp_path / "app-home"
    app_home(home)
    # A short scratch folder: its path shows in the dialogs of the README's screenshot.
    scratch = Path(tempfile.mkdtemp(prefix="qd-"))
    env = dict(display, QODER_DESKTOP_HOME=str(home), TMPDIR=str(scratch),
               HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="xcb")
    log_file = tmp_path / "app-output.txt"
    with log_file.open("w") as output:
        app = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo"], env=env,
                               stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        [dialog] = wait_for(lambda: windows(env, "^Approve Bash"), 60,
                             "the approval dialog (app output: see app-output.txt)")
        wait_for(lambda: windows(env, "^Qoder Desktop"), 10, "the main window")
        _screenshot(env, "desktop-check.png")

        # 1. Bash: allowed by Ctrl+Return.
        _key(env, dialog, "ctrl+Return")
        [workspace] = wait_for(lambda: list(scratch.glob("qoder-desktop-demo-*/workspace")),
                                10, "the demo workspace")
        hello = workspace / "hello.txt"
        # The shell creates the file before echo writes into it: wait for its text.
        wait_for(lambda: hello.exists() and hello.read_text() == "Hello from the demo\n", 30,
                  "the allowed command to run")

        # The next request (a Write) now waits for a person: nothing answers it by itself.
        [dialog] = wait_for(lambda: windows(env, "^Approve Write"), 30,
                             "the Write approval dialog")
        time.sleep(1.5)
        notes = workspace / "notes.md"
        assert not notes.exists()

        # 2. Write: Ctrl+E from the deny reason, replace the JSON, allow the edited input.
        original = json.loads(wait_for(lambda: _ledger(home)[1:2], 10, "the Write row")[0][3])
        edited = dict(original, content=original["content"] + "- Edited in the dialog.\n")
        _key(env, dialog, "ctrl+e")
        person_type(env, "ctrl+a", command="key")
        person_type(env, json.dumps(edited))
        _key(env, dialog, "ctrl+Return")
        wait_for(lambda: notes.exists() and notes.read_text() == edited["content"], 30,
                  "the edited Write to run")
        assert "Edited in the dialog" not in original["content"]

        # 3. Edit: denied by Escape; the file stays as it was.
        [dialog] = wait_for(lambda: windows(env, "^Approve Edit"), 30,
                             "the Edit approval dialog")
        shot = _screenshot(env, "desktop-check-edit.png")
        if os.environ.get("QODER_DESKTOP_UPDATE_SCREENSHOT"):  # refresh the README's image
            readme_image = Path(__file__).resolve().parents[2] / "docs" / "screenshot.png"
            subprocess.run(["convert", str(shot), "-crop", "1600x830+0+0", "+repage",
                            str(readme_image)], check=True)
        _key(env, dialog, "Escape")
        wait_for(lambda: len(_ledger(home)) > 2 and _ledger(home)[2][1] is not None, 30,
                  "the Edit to be denied")

        # 4. The question: digit 2 picks the second option, Ctrl+Return submits it.
        [dialog] = wait_for(lambda: windows(env, "^Question"), 30, "the question dialog")
        _key(env, dialog, "2")
        _key(env, dialog, "ctrl+Return")
        rows = wait_for(lambda: [r for r in _ledger(home) if r[0] == "AskUserQuestion"
                                  and r[1] is not None], 30, "the answered question")
        assert notes.read_text() == edited["content"]  # the denied Edit changed nothing

        log_text = (home / "state" / "qoder-desktop.log").read_text()
        assert "system tray available: True" in log_text
        ledger = _ledger(home)
        assert [row[:3] for row in ledger[:3]] == [("Bash", "allow_once", "user"),
                                                   ("Write", "allow_once", "user"),
                                                   ("Edit", "deny", "user")]
        assert json.loads(ledger[1][4]) == edited
        [(_tool, outcome, _by, _original, final)] = rows
        assert outcome == "allow_once"
        assert json.loads(final)["answers"] == {
            "Which format should the summary have?": "Table"}
    finally:
        stop_group(app, timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)
