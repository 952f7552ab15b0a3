"""A remote host through the real app: ``qoder-desktop remote add`` deploys the hook to an
account on a real sshd, the running ``qoder-desktop`` (under Xvfb, its own home) keeps the
host's ssh tunnel, the hook the agent's CLI would run on the host reaches the desk, a
person's key press in the dialog is the answer the host gets, and once the app is gone
the same hook prints nothing, so the CLI on the host asks in its own terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_home import app_home
from helpers.desktop import person_keys, wait_for, windows, xvfb_display
from helpers.shared_keyring import BACKEND, FILE_VARIABLE
from helpers.sshd import SshHost, remote_homes, skip_reason, ssh_host, ssh_server

from qoder_desktop.remote.tunnel_state import NOT_RUNNING, state_path

__all__ = ["remote_homes", "ssh_host", "ssh_server"]

TESTS = Path(__file__).parents[1]
TIMEOUT = 60.0
ARMING = 1.0
"""Longer than the dialogs' 400 ms arming delay, so the keys are not ignored."""
EVENT = {"hook_event_name": "PermissionRequest", "session_id": "s-app-remote",
         "cwd": "/srv/project", "permission_mode": "default", "tool_name": "Bash",
         "tool_input": {"command": "make deploy"}}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("Xvfb", "Xephyr", "xdotool")),
                       reason="needs Xvfb, Xephyr and xdotool (see .ci/run)"),
    pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or ""),
]


@pytest.fixture
def desk_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The desk's environment for the app and its commands alike: a private display, app
    home and HOME, and one keyring file both the command and the app read."""
    # A short home: the sockets' paths must stay under the 104 bytes a Unix socket takes.
    home = Path(tempfile.mkdtemp(prefix="qd-", dir="/tmp")) / "qoder-desktop"
    user_home = tmp_path / "home"
    user_home.mkdir()
    app_home(home)
    python_path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    try:
        with xvfb_display(person=True) as display:
            yield dict(display, QODER_DESKTOP_HOME=str(home), HOME=str(user_home),
                       TMPDIR=str(tmp_path), PYTHONPATH=python_path,
                       PYTHON_KEYRING_BACKEND=BACKEND,
                       **{FILE_VARIABLE: str(tmp_path / "keyring.json")},
                       QODER_DESKTOP_GATEWAY_TOKEN="app-remote-host-gateway-token-0123456789")
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


def _desk(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """``qoder-desktop ARGV`` on the desk, as the person runs it."""
    return subprocess.run([sys.executable, "-m", "qoder_desktop", *argv], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)


def _installed_command(host: SshHost) -> str:
    """The hook command `remote add` wrote into the host's Claude Code settings."""
    settings = host.user.home / ".claude" / "settings.json"
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["PermissionRequest"]
    return str(groups[0]["hooks"][0]["command"])


def _tunnel(env: dict[str, str], alias: str) -> str:
    """The app's line for the host's tunnel in its state file ('' while there is none)."""
    try:
        data = json.loads(state_path(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(data.get("hosts", {}).get(alias, ""))


def _decisions(home: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(home / "data" / "qoder-desktop.sqlite3") as db:
        return db.execute("SELECT host, tool_name, outcome, decided_by FROM approvals "
                          "WHERE outcome IS NOT NULL").fetchall()


def test_a_person_answers_a_remote_hosts_hook_through_the_apps_tunnel(
        desk_env: dict[str, str], ssh_host: SshHost, tmp_path: Path) -> None:
    alias, home = ssh_host.alias, Path(desk_env["QODER_DESKTOP_HOME"])
    added = _desk(desk_env, "remote", "add", alias, "--ssh-config", str(ssh_host.config))
    assert added.returncode == 0, added.stdout + added.stderr
    hook_command = _installed_command(ssh_host)

    output_file = tmp_path / "app-output.txt"
    with output_file.open("wb") as output:
        app = subprocess.Popen([sys.executable, "-m", "qoder_desktop"], env=desk_env,
                               stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        try:
            wait_for(lambda: app.poll() is not None or _tunnel(desk_env, alias) == "connected",
                     TIMEOUT, "the app's tunnel to the host")
        except AssertionError as exc:
            log = home / "state" / "qoder-desktop.log"
            raise AssertionError(f"{exc} ({_tunnel(desk_env, alias)!r})\napp output:\n"
                                 f"{output_file.read_text(errors='replace')}\nlog:\n"
                                 f"{log.read_text(errors='replace') if log.exists() else ''}"
                                 ) from None
        assert app.poll() is None, output_file.read_text(errors="replace")
        status = _desk(desk_env, "remote", "status", alias)
        assert "tunnel: connected" in status.stdout, status.stdout + status.stderr

        request = tmp_path / "request.json"
        request.write_text(json.dumps(EVENT), encoding="utf-8")
        with request.open("rb") as stdin:
            hook = subprocess.Popen(ssh_host.ssh(hook_command), stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # The dialog names the host: its session is the host's ("qd-remote · …").
            [dialog] = wait_for(lambda: windows(desk_env, f"^Approve Bash — {alias} · ",
                                                visible_only=True),
                                TIMEOUT, "the approval dialog naming the host")
            time.sleep(ARMING)
            person_keys(desk_env, dialog, "ctrl+Return")
            out, err = hook.communicate(timeout=TIMEOUT)
        finally:
            if hook.poll() is None:
                hook.kill()
                hook.communicate()
        assert hook.returncode == 0, err
        decision = json.loads(out)["hookSpecificOutput"]["decision"]
        assert decision["behavior"] == "allow", out
        assert wait_for(lambda: _decisions(home), TIMEOUT, "the decision in the history") == [
            (alias, "Bash", "allow_once", "user")]
    finally:
        os.killpg(app.pid, signal.SIGKILL)
        app.wait()

    after = ssh_host.run(hook_command, input=json.dumps(EVENT), timeout=TIMEOUT)
    assert (after.returncode, after.stdout) == (0, ""), after.stderr
    status = _desk(desk_env, "remote", "status", alias)
    assert f"tunnel: {NOT_RUNNING}" in status.stdout, status.stdout + status.stderr
    assert "Traceback" not in output_file.read_text(errors="replace")
