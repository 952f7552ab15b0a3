"""A private X server for the benchmarks that judge what a person sees (Qt's xcb platform).

`private_display()` starts ``Xvfb -displayfd`` (the server picks a free display number,
so parallel runs never clash), with no TCP listener, and stops it afterwards. No window
manager and no tray run on it: the windows map directly, as on a plain X session.
`private_session_bus()` starts the D-Bus session bus a desktop session has.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator

from benchmarks.common import stop_process


@contextlib.contextmanager
def private_display(screen: str = "1600x1000x24") -> Iterator[str]:
    """Start a private Xvfb; yields its DISPLAY (":N").

    Raises:
        RuntimeError: Xvfb is not installed or did not report its display.
    """
    if shutil.which("Xvfb") is None:
        raise RuntimeError("Xvfb is not installed (Debian package xvfb)")
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", screen,
                               "-nolisten", "tcp"], pass_fds=(write_fd,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()
        if not number:
            raise RuntimeError("Xvfb did not report a display number")
        yield f":{number}"
    finally:
        stop_process(server)


@contextlib.contextmanager
def private_session_bus() -> Iterator[str]:
    """Start a private D-Bus session bus, as every desktop session has; yields its
    address (for DBUS_SESSION_BUS_ADDRESS).

    Without one, Qt's accessibility bridge, at a window's first child widget, has libdbus
    start `dbus-launch` (X11 autolaunch): about 8 ms no person on a desktop waits for.
    The system's own session configuration, so the bus starts what it would start on a
    desktop (the accessibility bus, when installed); the tests' `private_bus`
    (`tests/helpers/notification_server.py`) starts nothing, on purpose.

    Raises:
        RuntimeError: dbus-daemon is not installed.
    """
    if shutil.which("dbus-daemon") is None:
        raise RuntimeError("dbus-daemon is not installed (Debian package dbus)")
    bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1",
                          "--print-pid=1"], capture_output=True, text=True, check=True)
    address, pid = bus.stdout.split()[:2]
    try:
        yield address
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), 15)


def use_xcb(display: str) -> None:
    """Point this process's Qt at `display` on the xcb platform (before QApplication)."""
    os.environ["DISPLAY"] = display
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    os.environ.pop("WAYLAND_DISPLAY", None)
