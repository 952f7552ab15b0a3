"""A private X display for tests that drive the real `qoder-desktop` process, and the
small waits and window look-ups those tests share (xdotool)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from benchmarks.common import stop_process

T = TypeVar("T")


def wait_for(check: Callable[[], T], timeout: float, what: str) -> T:
    """Poll `check` until it returns something true; fail with `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def windows(env: dict[str, str], title_regex: str, *, visible_only: bool = False) -> list[str]:
    """The X window ids whose title matches `title_regex` on `env`'s display."""
    command = ["xdotool", "search", *(["--onlyvisible"] if visible_only else []),
               "--name", title_regex]
    found = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    return found.stdout.split()


_TRAY_PROBE = ("from PySide6.QtWidgets import QApplication, QSystemTrayIcon\n"
               "app = QApplication([])\n"
               "print(QSystemTrayIcon.isSystemTrayAvailable())")


def tray_is_up(env: dict[str, str]) -> bool:
    """True when a system tray owns the display's tray selection (Qt's own check)."""
    probe = subprocess.run([sys.executable, "-c", _TRAY_PROBE], env=env, capture_output=True,
                           text=True, timeout=60, check=False)
    return probe.stdout.strip() == "True"


def stop_group(process: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    """End a process started with `start_new_session=True`, and its children: SIGTERM to
    its process group, SIGKILL after `timeout` s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return  # the group is gone already
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _start_server(command: list[str], env: dict[str, str] | None = None
                  ) -> tuple[subprocess.Popen[bytes], str]:
    """Start an X server that tells its display number through -displayfd."""
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen([command[0], "-displayfd", str(write_fd), *command[1:]],
                              pass_fds=(write_fd,), env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    return server, number


KEYBOARD_DISPLAY = "QODER_TEST_KEYBOARD_DISPLAY"
"""In a `xvfb_display(person=True)` environment: the outer display, whose keys reach the
app's display as a keyboard's keys (see `person_keys`)."""


@contextmanager
def xvfb_display(screen: str = "1600x1000x24", *, tray: bool = False,
                 tray_args: tuple[str, ...] = ("--widthtype", "request"),
                 session_bus: bool = True, person: bool = False) -> Iterator[dict[str, str]]:
    """A private Xvfb (its number found through -displayfd, no TCP), optionally with
    trayer as the system tray; yields the environment for programs on it (xcb).

    person=True puts a nested X server (Xephyr) in the Xvfb and yields the nested one:
    keys sent to the outer display (`person_keys`) reach the app from Xephyr's own
    keyboard device, as a person's keys do, where keys injected on the app's display
    (XTEST, `xdotool key` there) never approve anything.

    session_bus=False drops DBUS_SESSION_BUS_ADDRESS (Qt then shows its own balloon).
    """
    xvfb, number = _start_server(["Xvfb", "-screen", "0", screen, "-nolisten", "tcp"])
    processes = [xvfb]
    outer = number
    if person:
        width, height = screen.split("x")[:2]
        nested, number = _start_server(
            ["Xephyr", "-screen", f"{width}x{height}", "-no-host-grab", "-nolisten", "tcp"],
            env=dict(os.environ, DISPLAY=f":{outer}"))
        processes.insert(0, nested)
    env = dict(os.environ, DISPLAY=f":{number}", QT_QPA_PLATFORM="xcb")
    if person:
        env[KEYBOARD_DISPLAY] = f":{outer}"
    if not session_bus:
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    if tray:
        processes.insert(0, subprocess.Popen(
            ["trayer", "--edge", "top", "--align", "right", "--height", "24", *tray_args],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        if tray:  # the app looks for the tray once, at start: have it up before
            wait_for(lambda: tray_is_up(env), 30, "trayer to own the system tray")
        yield env
    finally:
        for process in processes:
            stop_process(process)


def person_keys(env: dict[str, str], window: str, *keys: str) -> None:
    """Focus `window` (on the app's display) and press `keys` (xdotool names) on the
    keyboard of an `xvfb_display(person=True)`: the nested server sees them come from its
    keyboard device, not from XTEST."""
    subprocess.run(["xdotool", "windowfocus", "--sync", window], env=env, check=True)
    person_type(env, *keys, command="key")


def person_type(env: dict[str, str], *text: str, command: str = "type") -> None:
    """Type `text` (or, with command="key", press keys) on the keyboard of an
    `xvfb_display(person=True)`, into whatever has the focus on the app's display."""
    outer = dict(env, DISPLAY=env[KEYBOARD_DISPLAY])
    [nested] = subprocess.run(["xdotool", "search", "--class", "Xephyr"], env=outer,
                              capture_output=True, text=True, check=True).stdout.split()[:1]
    subprocess.run(["xdotool", "windowfocus", "--sync", nested], env=outer, check=True)
    delay = ["--delay", "8"] if command == "type" else []
    subprocess.run(["xdotool", command, *delay, "--clearmodifiers", *text], env=outer,
                   check=True)
