"""Two copies of the real `qoder-desktop` process, each with its own data folder
(QODER_DESKTOP_HOME), set to the same gateway port: the second one names the first.

Both run offscreen with the ``fail`` keyring, so each makes its own gateway token for
the run: the token challenge alone cannot tell the other copy from a squatter. HOME is
a scratch folder shared by both (as for one person), so neither touches the real one.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers.app_home import app_home
from helpers.desktop import stop_group, wait_for
from helpers.entry_point import ENTRY_POINT, scratch_env

TIMEOUT = 60.0


def _start(env: dict[str, str], home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([str(ENTRY_POINT)], env={**env, "QODER_DESKTOP_HOME": str(home)},
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _log(home: Path) -> str:
    path = home / "state" / "qoder-desktop.log"
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def test_a_second_copy_says_which_copy_serves_the_port(tmp_path: Path) -> None:
    env = scratch_env(tmp_path, QT_QPA_PLATFORM="offscreen",
                      PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    env.pop("QODER_DESKTOP_GATEWAY_TOKEN", None)
    first_home, second_home = tmp_path / "copy-a", tmp_path / "copy-b"
    port = app_home(first_home)
    (second_home / "config").mkdir(parents=True)
    (second_home / "config" / "settings.json").write_text(json.dumps({"gateway_port": port}))
    first = _start(env, first_home)
    second = None
    try:
        wait_for(lambda: f"approval gateway listening on http://127.0.0.1:{port}"
                 in _log(first_home), TIMEOUT, "the first copy's gateway")
        records = tmp_path / "home" / ".local" / "state" / "qoder-desktop" / "gateways"
        record = json.loads((records / f"{port}.json").read_text())
        assert record["data_folder"] == str(first_home)
        second = _start(env, second_home)
        line = wait_for(lambda: next((entry for entry in _log(second_home).splitlines()
                                      if f"port {port}" in entry), None),
                        TIMEOUT, "the second copy's gateway to give up")
        assert f"served by another Qoder Desktop (data folder {first_home})" in line
        assert "not us" not in _log(second_home)
        assert second.poll() is None and first.poll() is None  # both still run
    finally:
        if second is not None:
            stop_group(second)
        stop_group(first)
    assert not (records / f"{port}.json").exists()  # the first copy took its record away
    assert not os.listdir(tmp_path / "home" / ".local" / "state" / "qoder-desktop" /
                          "gateways")
