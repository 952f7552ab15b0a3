"""Away mode through the real app: ``qoder-desktop --away=127.0.0.1`` (under Xvfb, its own
home, loopback offered by the developer setting) serves the desk's certificate on the
next port and the phone API over HTTPS under that certificate — a claim with a made-up
pairing code is refused — and a person's key press in the app's window (from a keyboard
device: the nested X server's) turns Away mode off: the ports close.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.app_home import app_home
from helpers.away_desk import free_port_pair
from helpers.desktop import person_keys, wait_for, windows, xvfb_display
from helpers.phone import Phone
from helpers.shared_keyring import BACKEND, FILE_VARIABLE

TESTS = Path(__file__).parents[1]
TIMEOUT = 60.0

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("Xvfb", "Xephyr", "xdotool")),
                       reason="needs Xvfb, Xephyr and xdotool (see .ci/run)"),
]


@pytest.fixture
def away_env(tmp_path: Path) -> Iterator[tuple[dict[str, str], int]]:
    """The app's environment (a private display with a person's keyboard, app home,
    HOME, a keyring file) and Away mode's port, chosen free."""
    home = Path(tempfile.mkdtemp(prefix="qd-", dir="/tmp")) / "qoder-desktop"
    user_home = tmp_path / "home"
    user_home.mkdir()
    port = free_port_pair()
    app_home(home, away={"list_loopback": True, "port": port, "back_after_idle_s": 0})
    python_path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    try:
        with xvfb_display(person=True) as display:
            yield dict(display, QODER_DESKTOP_HOME=str(home), HOME=str(user_home),
                       TMPDIR=str(tmp_path), PYTHONPATH=python_path,
                       PYTHON_KEYRING_BACKEND=BACKEND,
                       **{FILE_VARIABLE: str(tmp_path / "keyring.json")},
                       QODER_DESKTOP_GATEWAY_TOKEN="app-away-gateway-token-0123456789ab"), port
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


def _certificate(port: int) -> str | None:
    """The desk's CA certificate from the plain-HTTP page, or None while nothing serves."""
    try:
        response = httpx.get(f"http://127.0.0.1:{port + 1}/desk-ca.crt", timeout=5)
    except httpx.TransportError:
        return None
    return response.text if response.status_code == 200 else None


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_away_on_the_command_line_serves_phones_until_the_person_is_back(
        away_env: tuple[dict[str, str], int], tmp_path: Path) -> None:
    env, port = away_env
    output_file = tmp_path / "app-output.txt"
    with output_file.open("wb") as output:
        app = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--away=127.0.0.1"],
                               env=env, stdout=output, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        try:
            ca_pem = wait_for(lambda: app.poll() is not None or _certificate(port),
                              TIMEOUT, "Away mode's certificate page")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\napp output:\n"
                                 f"{output_file.read_text(errors='replace')}") from None
        assert isinstance(ca_pem, str) and "BEGIN CERTIFICATE" in ca_pem, \
            output_file.read_text(errors="replace")

        origin = f"https://127.0.0.1:{port}"
        phone = Phone("Stranger")
        trust = ssl.create_default_context(cadata=ca_pem)
        with httpx.Client(base_url=origin, verify=trust, timeout=10) as https:
            claim = https.post("/api/pair", headers={"Origin": origin}, json={
                "token": "made-up", "public_key": phone.public_key, "name": phone.name})
        assert claim.status_code == 403, claim.text

        [window] = wait_for(lambda: windows(env, "^Qoder Desktop", visible_only=True),
                            TIMEOUT, "the main window")
        assert _listening(port)
        person_keys(env, window, "shift")
        wait_for(lambda: not _listening(port) and not _listening(port + 1), TIMEOUT,
                 "Away mode to stop listening once the person is back")
        assert app.poll() is None  # (only Away mode ended, not the app)
    finally:
        os.killpg(app.pid, signal.SIGKILL)
        app.wait()
    assert "Traceback" not in output_file.read_text(errors="replace")
