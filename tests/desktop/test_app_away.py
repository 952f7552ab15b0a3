"""Away mode through the real app: ``qoder-desktop --away=127.0.0.1`` (under Xvfb, its own
home, loopback offered by the developer setting) serves the desk's certificate on the
next port and the phone API over HTTPS under that certificate — a claim with a made-up
pairing code is refused — and a person's key press in the app's window (from a keyboard
device: the nested X server's) turns Away mode off: the ports close. A person pairs a
phone with the keyboard (Settings → Devices → Pair a phone, the address copied, the
code confirmed), and a confirm key injected with XTEST pairs nothing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from helpers.app_home import app_home
from helpers.away_desk import free_port_pair
from helpers.away_rig import phone_socket
from helpers.desktop import person_keys, wait_for, windows, xvfb_display
from helpers.phone import Phone
from helpers.shared_keyring import BACKEND, FILE_VARIABLE

TESTS = Path(__file__).parents[1]
TIMEOUT = 60.0
ARMING = 1.0
"""Longer than the pairing dialog's 400 ms arming delay, so the keys are not ignored."""
CLIPBOARD = ("from PySide6.QtWidgets import QApplication\n"
             "app = QApplication([])\n"
             "print(app.clipboard().text())")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("Xvfb", "Xephyr", "xdotool")),
                       reason="needs Xvfb, Xephyr and xdotool (see .ci/run)"),
]


@contextmanager
def _away_env(tmp_path: Path, back_after_idle_s: int) -> Iterator[tuple[dict[str, str], int]]:
    """The app's environment (a private display with a person's keyboard, app home,
    HOME, a keyring file) and Away mode's port, chosen free."""
    home = Path(tempfile.mkdtemp(prefix="qd-", dir="/tmp")) / "qoder-desktop"
    user_home = tmp_path / "home"
    user_home.mkdir()
    port = free_port_pair()
    app_home(home, away={"list_loopback": True, "port": port,
                         "back_after_idle_s": back_after_idle_s})
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


@pytest.fixture
def away_env(tmp_path: Path) -> Iterator[tuple[dict[str, str], int]]:
    """Any key in the app's window is the person back."""
    with _away_env(tmp_path, 0) as env:
        yield env


@pytest.fixture
def pairing_env(tmp_path: Path) -> Iterator[tuple[dict[str, str], int]]:
    """Keys count as the person back only after an hour without any: pairing takes keys."""
    with _away_env(tmp_path, 3600) as env:
        yield env


@contextmanager
def _app(env: dict[str, str], port: int, output_file: Path) -> Iterator[str]:
    """``qoder-desktop --away=127.0.0.1`` running; yields the desk's CA certificate."""
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
        yield ca_pem
        assert app.poll() is None, output_file.read_text(errors="replace")
    finally:
        os.killpg(app.pid, signal.SIGKILL)
        app.wait()
    assert "Traceback" not in output_file.read_text(errors="replace")


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
    with _app(env, port, tmp_path / "app-output.txt") as ca_pem:
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


def _after_arming() -> None:
    """Wait out the pairing dialog's arming delay (keys before it do nothing)."""
    time.sleep(ARMING)


def _pairing_url(env: dict[str, str], settings: str) -> tuple[str, str]:
    """The person opens "Pair a phone…" and copies its address: (dialog, address)."""
    person_keys(env, settings, "alt+h")
    [dialog] = wait_for(lambda: windows(env, "^Pair a phone$", visible_only=True),
                        TIMEOUT, "the pairing dialog")
    wait_for(lambda: person_keys(env, dialog, "alt+y") or _clipboard(env).startswith("https"),
             TIMEOUT, "the pairing address on the clipboard")
    return dialog, _clipboard(env)


def _clipboard(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", CLIPBOARD], env=env, capture_output=True,
                          text=True, timeout=30, check=False)
    return done.stdout.strip()


async def _claim_and_wait(origin: str, ca_pem: str, url: str, phone: Phone,
                          then: Callable[[], None]) -> dict[str, Any]:
    """The phone claims the address's token, signs in with the pairing id, sees the
    code, then (`then`: the person at the desk) hears how the pairing ended."""
    token = url.split("#pair=")[1]
    trust = ssl.create_default_context(cadata=ca_pem)
    async with httpx.AsyncClient(base_url=origin, verify=trust, timeout=10) as https:
        claim = (await https.post("/api/pair", headers={"Origin": origin}, json={
            "token": token, "public_key": phone.public_key, "name": phone.name})).json()
    assert claim["code"] == phone.code(token)
    rig = SimpleNamespace(port=int(origin.rsplit(":", 1)[1]), origin=origin,
                          client_ssl=trust)
    async with phone_socket(rig, phone) as client:  # type: ignore[arg-type]
        await client.hello()
        await client.send(phone.auth(client.challenge, device_id=claim["pairing_id"]))
        assert await client.receive() == {"type": "pairing", "state": "waiting",
                                          "code": claim["code"]}
        await asyncio.to_thread(then)
        return await client.receive()


def test_a_person_pairs_a_phone_with_the_keyboard_and_an_injected_confirm_pairs_nothing(
        pairing_env: tuple[dict[str, str], int], tmp_path: Path) -> None:
    env, port = pairing_env
    origin = f"https://127.0.0.1:{port}"
    with _app(env, port, tmp_path / "app-output.txt") as ca_pem:
        [window] = wait_for(lambda: windows(env, "^Qoder Desktop", visible_only=True),
                            TIMEOUT, "the main window")
        person_keys(env, window, "ctrl+comma")
        [settings] = wait_for(lambda: windows(env, "^Settings$", visible_only=True),
                              TIMEOUT, "the settings dialog")
        person_keys(env, settings, "alt+v")  # Devices
        dialog, url = _pairing_url(env, settings)
        assert url.startswith(f"{origin}/#pair=")

        def injected_then_refused() -> None:
            _after_arming()
            subprocess.run(["xdotool", "windowfocus", "--sync", dialog, "key", "alt+c"],
                           env=env, check=True)  # XTEST on the app's display
            person_keys(env, dialog, "alt+r")  # after it, in order: the person refuses

        ended = asyncio.run(_claim_and_wait(origin, ca_pem, url, Phone("Stranger"),
                                            injected_then_refused))
        assert ended == {"type": "pairing", "state": "refused"}

        person_keys(env, dialog, "Escape")
        wait_for(lambda: not windows(env, "^Pair a phone$", visible_only=True), TIMEOUT,
                 "the first pairing dialog to close")
        dialog, url = _pairing_url(env, settings)

        def confirmed() -> None:
            _after_arming()
            person_keys(env, dialog, "alt+c")

        phone = Phone("Pixel 7")
        paired = asyncio.run(_claim_and_wait(origin, ca_pem, url, phone, confirmed))
        assert paired["type"] == "paired" and paired["name"] == "Pixel 7", paired
