"""The real app under a hook-socket flood: ``qoder-desktop`` under Xvfb with a lowered
descriptor limit, another process of the user holding twice that many idle connections
to the hook socket; a real hook's request still shows its dialog, a real key press
answers it, and no error box ever opens (one opened then had hung the app for good).
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_home import app_home
from helpers.desktop import person_keys, stop_group, wait_for, windows, xvfb_display
from helpers.hook_command import HOOK_ARGV

from qoder_desktop.ui.error_reporter import TITLE as ERROR_TITLE

ATTACKER = Path(__file__).parents[1] / "helpers" / "hook_attacker.py"
LIMIT = 256
"""The app's descriptor limit here (the usual one is 1024; a quarter goes to hooks)."""
TIMEOUT = 60.0
ARMING = 1.0
"""Longer than the dialogs' 400 ms arming delay, so the keys are not ignored."""
EVENT = {"hook_event_name": "PermissionRequest", "session_id": "s-app-flood",
         "cwd": "/work/project", "permission_mode": "default", "tool_name": "Bash",
         "tool_input": {"command": "make test"}}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("Xvfb", "Xephyr", "xdotool")),
                       reason="needs Xvfb, Xephyr and xdotool (see .ci/run)"),
]


def _lower_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, hard))


@pytest.fixture
def app_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The running app's environment (a private display and home); the app is stopped
    afterwards and must not have printed a traceback."""
    # A short home: the socket's path must stay under the 104 bytes a Unix socket takes,
    # also in pytest-xdist's longer temporary folders.
    home = Path(tempfile.mkdtemp(prefix="qd-", dir="/tmp")) / "qoder-desktop"
    user_home = tmp_path / "home"
    user_home.mkdir()
    app_home(home)
    with xvfb_display(person=True) as display:
        env = dict(display, QODER_DESKTOP_HOME=str(home), HOME=str(user_home),
                   TMPDIR=str(tmp_path), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
                   QODER_DESKTOP_GATEWAY_TOKEN="app-hook-flood-gateway-token-0123456789")
        log_file = home / "state" / "qoder-desktop.log"
        output = (tmp_path / "app-output.txt").open("wb")
        app = subprocess.Popen([sys.executable, "-m", "qoder_desktop"], env=env,
                               stdout=output, stderr=subprocess.STDOUT,
                               start_new_session=True, preexec_fn=_lower_limit)
        try:
            try:
                wait_for(lambda: app.poll() is not None or (log_file.exists() and
                         "terminal hooks: listening" in log_file.read_text(encoding="utf-8")),
                         TIMEOUT, "the app's hook socket")
            except AssertionError as exc:
                log = log_file.read_text(errors="replace") if log_file.exists() else "(no log)"
                raise AssertionError(f"{exc}\napp output:\n"
                                     f"{(tmp_path / 'app-output.txt').read_text()}\nlog:\n"
                                     f"{log}") from None
            assert app.poll() is None, (tmp_path / "app-output.txt").read_text()
            yield env
            assert app.poll() is None, "the app died"
        finally:
            stop_group(app, timeout=15)
            output.close()
        shutil.rmtree(home.parent, ignore_errors=True)
        text = (tmp_path / "app-output.txt").read_text(errors="replace")
        assert "Traceback" not in text, text


def test_a_flood_of_idle_connections_leaves_the_app_answering_hooks(
        app_env: dict[str, str], tmp_path: Path) -> None:
    stdin = tmp_path / "hook-input.json"
    stdin.write_text(json.dumps(EVENT), encoding="utf-8")
    attacker = subprocess.Popen([sys.executable, str(ATTACKER),
                                 str(Path(app_env["QODER_DESKTOP_HOME"]) / "runtime" /
                                     "hooks.sock")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert attacker.stdin is not None and attacker.stdout is not None
        attacker.stdin.write(f"idle {2 * LIMIT}\n")
        attacker.stdin.flush()
        assert json.loads(attacker.stdout.readline()) == {"connected": 2 * LIMIT}
        with stdin.open("rb") as event:
            hook = subprocess.Popen(HOOK_ARGV, env=app_env, stdin=event,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            [dialog] = wait_for(lambda: windows(app_env, "^Approve Bash"), TIMEOUT,
                                "the approval dialog")
            time.sleep(ARMING)
            person_keys(app_env, dialog, "ctrl+Return")
            out, err = hook.communicate(timeout=TIMEOUT)
        finally:
            if hook.poll() is None:
                hook.kill()
                hook.communicate()
        decision = json.loads(out)["hookSpecificOutput"]["decision"]
        assert decision["behavior"] == "allow", err
        assert windows(app_env, f"^{ERROR_TITLE}$") == []
    finally:
        attacker.kill()
        attacker.communicate()
