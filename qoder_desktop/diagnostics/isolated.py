"""Qt-free helpers of the self-check: is there a display, and running a probe in a child.

Qt aborts the whole process when it cannot open the display (``could not connect to
display``), so the tray probe (`qoder_desktop.ui.probe.describe_tray`, given to the
self-check by the entry point) runs through `run_isolated`, in a forked child on Linux.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any

_DISPLAY_VARS = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


def has_display(environ: Mapping[str, str] | None = None,
                platform: str | None = None) -> bool:
    """True when Qt has somewhere to draw.

    Windows and macOS always have one. Elsewhere (X11/Wayland) one of ``DISPLAY``,
    ``WAYLAND_DISPLAY`` or ``QT_QPA_PLATFORM`` (e.g. ``offscreen``) must be set.

    Args:
        environ: the environment to read (``os.environ`` when None).
        platform: the value of ``sys.platform`` to assume (the real one when None).
    """
    env = os.environ if environ is None else environ
    system = sys.platform if platform is None else platform
    if system.startswith(("win", "darwin")):
        return True
    return any(env.get(name, "").strip() for name in _DISPLAY_VARS)


def run_isolated(func: Callable[[], Any], timeout: float) -> tuple[Any, str | None]:
    """Run `func` in a forked child (Linux) so that an abort cannot take us down.

    Elsewhere (no ``fork``, or macOS where forking a GUI process is unsafe) it runs
    in-process. The result must be JSON-serialisable.

    Returns:
        ``(result, None)``, or ``(None, what went wrong)`` including the child's stderr.
    """
    if not hasattr(os, "fork") or sys.platform == "darwin":
        try:
            return func(), None
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            code = 0
            try:
                faulthandler.disable()  # an abort is reported by the parent, not dumped
                os.close(read_fd)
                os.dup2(err.fileno(), 1)
                os.dup2(err.fileno(), 2)
                os.write(write_fd, json.dumps(func()).encode())
            except BaseException as exc:
                os.write(2, f"{type(exc).__name__}: {exc}\n".encode())
                code = 3
            finally:
                os._exit(code)
        os.close(write_fd)
        status = _wait(pid, timeout)
        with os.fdopen(read_fd, "rb") as pipe:
            payload = pipe.read()
        err.seek(0)
        lines = [ln.strip() for ln in err.read().decode(errors="replace").splitlines()]
    said = [ln for ln in lines if ln]
    unreachable = [ln for ln in said if "could not connect to display" in ln]
    detail = " / ".join((unreachable or said)[:2])[:300]
    if status is None:
        return None, f"no answer within {timeout:g} s"
    if status != 0 or not payload:
        how = (f"killed by signal {-status}" if status < 0 else f"exit code {status}")
        return None, f"{how}: {detail or 'no message'}"
    return json.loads(payload), None


def _wait(pid: int, timeout: float) -> int | None:
    """Wait for a child; its exit code (-signal when killed), None after a timeout."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.02)
