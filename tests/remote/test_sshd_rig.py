"""The rig itself: a real sshd on loopback that the test ssh_config reaches by its alias."""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

from helpers.remote_user import RemoteUser, sweep_stale_users
from helpers.sshd import SshHost, SshServer


def test_the_alias_logs_in_as_the_remote_user_with_its_own_home(ssh_host: SshHost) -> None:
    result = ssh_host.run('id -un; echo "$HOME"; python3 -c "print(1 + 1)"')

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [ssh_host.user.name, str(ssh_host.user.home), "2"]


def test_the_closed_alias_is_refused(ssh_host: SshHost) -> None:
    result = subprocess.run([*ssh_host.prefix, "-o", "BatchMode=yes", ssh_host.closed_alias,
                             "true"], capture_output=True, text=True, timeout=30)

    assert result.returncode == 255
    assert "Connection refused" in result.stderr


def test_a_stopped_server_refuses_and_comes_back_on_the_same_port(ssh_host: SshHost) -> None:
    ssh_host.server.stop()
    refused = ssh_host.run("true")
    ssh_host.server.start()
    back = ssh_host.run("true")

    assert refused.returncode == 255 and "Connection refused" in refused.stderr
    assert back.returncode == 0, back.stderr


def test_a_user_path_without_python3_hides_it(ssh_host: SshHost) -> None:
    ssh_host.user.set_path("/nonexistent")

    result = ssh_host.run("command -v python3 || echo missing")

    assert result.stdout.strip() == "missing"


def test_users_left_by_a_killed_run_are_swept(ssh_server: SshServer, tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    base = tmp_path / f"qd-remote-homes-{gone.pid}-x"
    base.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)
    public_key = ssh_server.client_key.with_suffix(".pub").read_text(encoding="ascii")
    left = RemoteUser.create(base, public_key)
    running = tmp_path / f"qd-remote-homes-{os.getpid()}-y"
    running.mkdir()

    sweep_stale_users(tmp_path)

    try:
        assert left.name not in {record.pw_name for record in pwd.getpwall()}
        assert not base.exists() and running.exists()
    finally:
        left.delete()
