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


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def xvfb_display(screen: str = "1600x1000x24", *, tray: bool = False,
                 tray_args: tuple[str, ...] = ("--widthtype", "request"),
                 session_bus: bool = True) -> Iterator[dict[str, str]]:
    """A private Xvfb (its number found through -displayfd, no TCP), optionally with
    trayer as the system tray; yields the environment for programs on it (xcb).

    session_bus=False drops DBUS_SESSION_BUS_ADDRESS (Qt then shows its own balloon).
    """
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", screen,
                             "-nolisten", "tcp"], pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    env = dict(os.environ, DISPLAY=f":{number}", QT_QPA_PLATFORM="xcb")
    if not session_bus:
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    processes = [xvfb]
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
            _stop(process)
