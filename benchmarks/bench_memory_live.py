"""Memory with a live session, measured from outside as a person would see it.

The app is started as a person starts it: ``python -m qoder_desktop --demo`` in its own
process, on a private Xvfb with a session bus and, when `trayer` is installed, a tray.
The demo's session runs until its first dialog (``Approve …``) maps: its CLI is its own
process (not counted), and so is the demo's scripted model (``qoder-desktop
scripted-model``, which ``--demo`` starts beside the app: a person with an account has
none). `SETTLE_S` seconds after the main window mapped, VmRSS of the app process is read
from ``/proc/<pid>/status`` with the parts of ``smaps_rollup`` (anonymous, file-backed,
shared memory with the X server). The floor is a fresh process showing an empty
`QMainWindow` of the main window's size on the same display, read the
same way after the same wait.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from benchmarks.common import (
    REPO_ROOT,
    Figure,
    child_env,
    emit,
    judge,
    log,
    parse_args,
    private_gateway_port,
    stop_process,
)
from benchmarks.xvfb import private_display, private_session_bus

TARGET_MB = 120.0
SETTLE_S = 20.0
MAP_TIMEOUT_S = 60.0
FLOOR_SCRIPT = """
import sys
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([sys.argv[0]])
window = QMainWindow()
window.setWindowTitle("bare window")
window.resize(int(sys.argv[1]), int(sys.argv[2]))
window.show()
sys.exit(app.exec())
"""


def status_mb(pid: int, field: str) -> float:
    """A ``VmRSS``-style field of /proc/<pid>/status, in MB (NaN when gone)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def rollup_mb(pid: int) -> dict[str, float]:
    """The anonymous / file-backed / shared-memory parts of a process's RSS (MB)."""
    parts: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("Rss", "Anonymous", "Pss_File", "Pss_Shmem"):
                parts[key] = int(rest.split()[0]) / 1024.0
    return parts


def largest_mappings(pid: int, count: int = 6) -> str:
    """The mappings holding the most RSS ("[anon] 45 MB, [heap] 23 MB, …")."""
    held: Counter[str] = Counter()
    current = "[anon]"
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                current = Path(head[5]).name if len(head) > 5 else "[anon]"
            elif head and head[0] == "Rss:":
                held[current] += int(head[1])
    return ", ".join(f"{name} {kb / 1024:.1f} MB" for name, kb in held.most_common(count))


def window_ids(display: str, name: str) -> list[str]:
    """The visible windows whose title matches `name` (xdotool)."""
    done = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name],
                          env=dict(os.environ, DISPLAY=display), capture_output=True,
                          text=True, check=False)
    return done.stdout.split()


def wait_for_window(display: str, name: str, process: subprocess.Popen[bytes],
                    timeout: float = MAP_TIMEOUT_S) -> float:
    """Wait until a window titled `name` maps; returns when (monotonic seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the process ended ({process.returncode}) before {name!r} "
                               "mapped")
        if window_ids(display, name):
            return time.monotonic()
        time.sleep(0.1)
    raise RuntimeError(f"no window {name!r} within {timeout:g} s")


@contextlib.contextmanager
def desktop_session(display: str) -> Iterator[dict[str, str]]:
    """A session bus and (when installed) a tray on `display`; yields the environment."""
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb")
    env.pop("WAYLAND_DISPLAY", None)
    with private_session_bus() as address:
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        tray = (subprocess.Popen(["trayer"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL) if shutil.which("trayer") else None)
        try:
            yield env
        finally:
            if tray is not None:
                stop_process(tray)


def app_rss(display: str, settle: float) -> tuple[float, dict[str, float], str, str]:
    """RSS of ``qoder-desktop --demo`` `settle` s after its window mapped, its first
    dialog open; (MB, parts, largest mappings, window size)."""
    home = Path(tempfile.mkdtemp(prefix="qoder-bench-live-"))
    with desktop_session(display) as env:
        env.update(HOME=str(home / "home"), QODER_DESKTOP_HOME=str(home / "qoder-home"))
        private_gateway_port(home / "qoder-home")  # never another benchmark's gateway
        for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                         ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache")):
            env[var] = str(home / "home" / sub)
        for var in ("ANTHROPIC_API_KEY", "QODER_PERSONAL_ACCESS_TOKEN"):
            env.pop(var, None)
        app = subprocess.Popen([sys.executable, "-m", "qoder_desktop", "--demo"],
                               env=env, cwd=home, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            mapped = wait_for_window(display, "^Qoder Desktop$", app)
            wait_for_window(display, "^Approve ", app)
            time.sleep(max(0.0, mapped + settle - time.monotonic()))
            rss = status_mb(app.pid, "VmRSS")
            parts, largest = rollup_mb(app.pid), largest_mappings(app.pid)
            parts["threads"] = float(len(os.listdir(f"/proc/{app.pid}/task")))
            size = subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--name", "^Qoder Desktop$",
                 "getwindowgeometry"], env=env, capture_output=True, text=True,
                check=False).stdout
        finally:
            stop_process(app, timeout=10)
    geometry = next((line.split()[-1] for line in size.splitlines() if "Geometry" in line),
                    "1360x820")
    return rss, parts, largest, geometry


def floor_rss(display: str, geometry: str, settle: float) -> float:
    """RSS of a bare `QMainWindow` of `geometry`, `settle` s after it mapped."""
    width, height = geometry.split("x")
    env = child_env(DISPLAY=display, QT_QPA_PLATFORM="xcb")
    bare = subprocess.Popen([sys.executable, "-c", FLOOR_SCRIPT, width, height], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        mapped = wait_for_window(display, "^bare window$", bare)
        time.sleep(max(0.0, mapped + settle - time.monotonic()))
        return status_mb(bare.pid, "VmRSS")
    finally:
        stop_process(bare, timeout=10)


def run(settle: float) -> list[Figure]:
    """Measure the app and the floor on one private display."""
    if shutil.which("xdotool") is None or shutil.which("dbus-daemon") is None:
        raise RuntimeError("needs xdotool and dbus-daemon (Debian packages xdotool, dbus)")
    with private_display() as display:
        log(f"the demo on {display}, RSS {settle:g} s after its window maps")
        rss, parts, largest, geometry = app_rss(display, settle)
        floor = floor_rss(display, geometry, settle)
    log(f"app {rss:.1f} MB, bare window {floor:.1f} MB")
    return [Figure("memory: live session (--demo, first dialog open, xcb)", "MB",
                   {"value": rss}, f"≤ {TARGET_MB:g} MB", judge(rss, TARGET_MB),
                   floor={"value": floor}, floor_label="bare window, same size, xcb",
                   notes=[
        f"read from outside (/proc/<pid>/status) {settle:g} s after the main window mapped "
        f"({geometry}), the demo's first dialog open; the agent's CLI and the demo's scripted "
        "model are processes of their own and not counted",
        f"RSS = {parts.get('Anonymous', float('nan')):.0f} MB anonymous + "
        f"{parts.get('Pss_File', float('nan')):.0f} MB file-backed (PSS) + "
        f"{parts.get('Pss_Shmem', float('nan')):.0f} MB shared with the X server (PSS)",
        f"largest mappings: {largest}",
        f"threads of the app process: {parts.get('threads', float('nan')):.0f} (each with "
        "its stack and, once it allocates, a glibc arena)"])]


def main() -> None:
    """Entry point (python -m benchmarks.bench_memory_live)."""
    args = parse_args()
    os.chdir(REPO_ROOT)
    emit(run(8.0 if args.quick else SETTLE_S), args.out)


if __name__ == "__main__":
    main()
