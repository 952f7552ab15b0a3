"""Away mode costs the app's start nothing unless asked for: a plain start finishes
start-up without importing Away mode's core (cryptography's x509, the certificate
authority, the devices) or segno; ``--away`` imports it and turns Away mode on. The
real ``qoder-desktop`` entry point, offscreen, in its own HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers.away_desk import free_port_pair
from helpers.shared_keyring import BACKEND, FILE_VARIABLE

from qoder_desktop.cli import parse_app_args

TESTS = Path(__file__).resolve().parents[1]
AWAY_MODULES = ("qoder_desktop.away", "segno", "cryptography.x509")

START_UP_PROBE = """
import os, sys
from PySide6.QtCore import QTimer
from qoder_desktop.diagnostics import memory
from qoder_desktop.ui import start_up

AWAY = %r
loaded = lambda: sorted(name for name in sys.modules if name.startswith(AWAY))
desktops = []
build_core = start_up.StartUp._build_core

def keep(self, loaded_settings):
    desktops.append(build_core(self, loaded_settings))
    return desktops[-1]

def start_up_done():  # the last step of start-up
    print("at the end of start-up:", loaded(), flush=True)
    if "--away" not in " ".join(sys.argv):
        os._exit(0)
    away = desktops[0].away
    def fetch(url, fingerprint):  # (a phone on the network, while the app serves)
        import urllib.request
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        print("certificate page names the fingerprint:", fingerprint in page, flush=True)
        os._exit(0)

    def check():
        if away.is_on or desktops[0].window.ui.statusBar.currentMessage().startswith("Away"):
            timer.stop()
            print("once on:", "qoder_desktop.away.devices" in loaded(), flush=True)
            print("status:", desktops[0].window.ui.statusBar.currentMessage(), flush=True)
            status = away.status()
            if status is None or not status.on:
                os._exit(0)
            import threading
            threading.Thread(target=fetch, daemon=True, args=(
                status.ca_url.removesuffix("desk-ca.crt"), status.fingerprint)).start()
    timer = QTimer()
    timer.timeout.connect(check)
    timer.start(20)
    desktops.append(timer)

start_up.StartUp._build_core = keep
memory.settle_memory = start_up_done
from qoder_desktop.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def _run(tmp_path: Path, *args: str, port: int = 18765) -> list[str]:
    home = tmp_path / "qoder"
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "settings.json").write_text(
        json.dumps({"away": {"list_loopback": True, "port": port}}), encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               QODER_DESKTOP_HOME=str(home), XDG_RUNTIME_DIR=str(tmp_path),
               PYTHON_KEYRING_BACKEND=BACKEND,
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
               **{FILE_VARIABLE: str(tmp_path / "keyring.json")})
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run([sys.executable, "-c", START_UP_PROBE % (AWAY_MODULES,), *args],
                          env=env, cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_a_plain_start_imports_nothing_of_away_mode(tmp_path: Path) -> None:
    assert _run(tmp_path) == ["at the end of start-up: []"]


def test_away_on_the_command_line_loads_it_and_turns_it_on(tmp_path: Path) -> None:
    port = free_port_pair()
    lines = _run(tmp_path, "--away=127.0.0.1", port=port)
    assert lines[1:] == ["once on: True",
                         f"status: Away mode is on at https://127.0.0.1:{port}",
                         "certificate page names the fingerprint: True"], lines


def test_away_takes_an_optional_address() -> None:
    assert parse_app_args([]).away is None
    assert parse_app_args(["--away"]).away == ""
    assert parse_app_args(["--away=192.168.1.20"]).away == "192.168.1.20"
    assert parse_app_args(["--away", "100.101.102.103", "--demo"]).away == "100.101.102.103"
