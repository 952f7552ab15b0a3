"""Cold start as a person sees it: process start → first frame of the main window, on X.

Each sample is a fresh process on Qt's `xcb` platform under a private Xvfb (started with
``-displayfd``): `benchmarks/cold_start_driver.py` runs the real entry point and reports
the main window's expose, the first paint event after it and the next loop turn (the
frame flushed to the X server), then exits. The floor, in the same run and interleaved
with the app's samples: `benchmarks/bare_window_driver.py`, a bare PySide6 window of
the same size timed the same way. The first launch (it creates the database) is
reported apart; every start reuses compiled modules (as an installed app does; cached in
the run's private folder before the first launch), later starts also the database and a
warm OS file cache. Context: starts
without cached bytecode, the old offscreen `showEvent` figure, an empty interpreter,
`-X importtime`.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import (
    REPO_ROOT,
    Figure,
    emit,
    judge,
    log,
    parse_args,
    setup_env,
    summarize,
)

TARGET_S = 0.40
HERE = Path(__file__).resolve().parent
APP_DRIVER = HERE / "cold_start_driver.py"
BARE_DRIVER = HERE / "bare_window_driver.py"


def child_env(home: Path, platform: str, display: str | None, *,
              bytecode: bool = True, bus: str | None = None) -> dict[str, str]:
    """The platform, a private home (its gateway on a free port), no inherited secrets,
    and `bus` as the session bus (None: none, as offscreen).

    `bytecode`: compiled modules are cached (in `home`, PYTHONPYCACHEPREFIX) and reused,
    as an installed app's modules are compiled when it is installed; an inherited
    PYTHONDONTWRITEBYTECODE would otherwise recompile the app's own modules (not its
    libraries, which pip compiled) at every start. False: that inherited condition
    (PYTHONDONTWRITEBYTECODE=1, no cache folder of ours).
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = home / "qoder" / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"gateway_port": port}), encoding="utf-8")
    env = dict(os.environ)
    env.update({"QT_QPA_PLATFORM": platform, "QODER_DESKTOP_HOME": str(home / "qoder"),
                "HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run"),
                "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT),
                                                          env.get("PYTHONPATH", "")) if p)})
    if display is not None:
        env["DISPLAY"] = display
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    if bus is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
    env.pop("WAYLAND_DISPLAY", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    (home / "run").mkdir(exist_ok=True, mode=0o700)
    for name in ("ANTHROPIC_API_KEY", "QODER_PERSONAL_ACCESS_TOKEN"):
        env.pop(name, None)
    return env


def launch(driver: Path, env: dict[str, str], *args: str) -> dict[str, float]:
    """One fresh process; seconds from spawn to each mark (and its RSS, size)."""
    start = time.clock_gettime(time.CLOCK_MONOTONIC)
    done = subprocess.run([sys.executable, str(driver), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{driver.name} did not report its first frame (rc "
                           f"{done.returncode}):\n{done.stderr[-2000:]}")
    marks = json.loads(lines[-1])
    result = {key: marks[key] - start for key in ("main", "shown", "exposed", "painted",
                                                    "frame") if key in marks}
    result.update(import_s=marks["import_s"], rss_mb=marks["rss_mb"],
                  cpu_s=marks.get("cpu_s", math.nan), gui_cpu_s=marks.get("gui_cpu_s", math.nan),
                  width=marks["width"], height=marks["height"],
                  modules=marks.get("modules", 0), pydantic=float(marks.get("pydantic", 0)),
                  gc_collections=marks.get("gc", {}).get("collections", math.nan),
                  gc_cpu_s=marks.get("gc", {}).get("cpu_s", math.nan))
    return result


def wall(argv: list[str], env: dict[str, str]) -> float:
    """Wall time of a short command (s)."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True, timeout=60)
    return time.perf_counter() - start


def slowest_imports(env: dict[str, str], count: int = 8) -> list[tuple[str, float]]:
    """Packages by summed self import time of `qoder_desktop.ui.app` (ms), slowest first."""
    code = ("from qoder_desktop.ui.lean_imports import apply_lean_imports; apply_lean_imports(); "
            "import qoder_desktop.ui.app")  # as the entry point imports it
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                          env=env, capture_output=True, text=True, check=True, timeout=60)
    totals: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[0].split(":")[-1].strip().isdigit():
            continue
        name = parts[2].strip()
        package = ".".join(name.split(".")[:2]) if name.startswith("qoder_desktop") else (
            name.split(".")[0])
        totals[package] = totals.get(package, 0.0) + int(parts[0].split(":")[-1]) / 1000.0
    return sorted(totals.items(), key=lambda item: -item[1])[:count]


def _med(samples: list[dict[str, float]], key: str) -> float:
    return summarize([s[key] for s in samples])["median"]


def run(runs: int) -> list[Figure]:
    """First launch, then `runs` app starts and `runs` bare windows, interleaved."""
    from benchmarks.xvfb import private_display, private_session_bus

    home = Path(tempfile.mkdtemp(prefix="qoder-bench-cold-"))
    with private_display() as display, private_session_bus() as bus:
        env = child_env(home, "xcb", display, bus=bus)
        warm = "import qoder_desktop.ui.app, benchmarks.first_paint"  # compiled once, cached
        subprocess.run([sys.executable, "-c", warm], env=env, capture_output=True, check=True,
                       timeout=120)
        first = launch(APP_DRIVER, env)  # creates the database
        size = (str(first["width"]), str(first["height"]))
        apps: list[dict[str, float]] = []
        bares: list[dict[str, float]] = []
        uncached: list[dict[str, float]] = []
        no_bytecode = child_env(home, "xcb", display, bytecode=False, bus=bus)
        for index in range(runs):
            pair = [(APP_DRIVER, apps, ()), (BARE_DRIVER, bares, size)]
            for driver, into, args in pair if index % 2 == 0 else reversed(pair):
                into.append(launch(driver, env, *args))
            if index % 3 == 1:
                uncached.append(launch(APP_DRIVER, no_bytecode))
    log(f"xcb first launch {first['frame']:.3f} s; app: "
        + ", ".join(f"{s['frame']:.3f}" for s in apps) + "; bare: "
        + ", ".join(f"{s['frame']:.3f}" for s in bares))
    offscreen_env = child_env(home, "offscreen", None)
    offscreen = [launch(APP_DRIVER, offscreen_env) for _ in range(max(2, runs // 2))]
    empty = min(wall([sys.executable, "-c", "pass"], env) for _ in range(3))
    imports = slowest_imports(env)

    frame = summarize([s["frame"] for s in apps])
    floor = summarize([s["frame"] for s in bares])
    rss, bare_rss = _med(apps, "rss_mb"), _med(bares, "rss_mb")
    return [Figure(
        "cold start: process start → first frame of the main window (xcb)", "s", frame,
        f"≤ {TARGET_S:g} s", judge(frame["median"], TARGET_S), [
            f"{first['width']}×{first['height']} window on a private Xvfb, a fresh process "
            f"per sample; first launch (creates the database): {first['frame']:.3f} s",
            f"app med: interpreter up {_med(apps, 'main'):.3f} s, `import "
            f"qoder_desktop.ui.app` {_med(apps, 'import_s'):.3f} s, showEvent "
            f"{_med(apps, 'shown'):.3f} s, exposed {_med(apps, 'exposed'):.3f} s, first "
            f"paint event {_med(apps, 'painted'):.3f} s, frame {_med(apps, 'frame'):.3f} s",
            f"bare window med: interpreter up {_med(bares, 'main'):.3f} s, import PySide6 "
            f"{_med(bares, 'import_s'):.3f} s, exposed {_med(bares, 'exposed'):.3f} s, frame "
            f"{_med(bares, 'frame'):.3f} s",
            f"CPU time to the first frame (what load adds little to), med: GUI thread app "
            f"{_med(apps, 'gui_cpu_s'):.3f} s, bare {_med(bares, 'gui_cpu_s'):.3f} s "
            f"({_med(apps, 'gui_cpu_s') / _med(bares, 'gui_cpu_s'):.2f}x); whole process app "
            f"{_med(apps, 'cpu_s'):.3f} s, bare {_med(bares, 'cpu_s'):.3f} s "
            f"({_med(apps, 'cpu_s') / _med(bares, 'cpu_s'):.2f}x)",
            f"automatic garbage collections until the first frame, med: app "
            f"{_med(apps, 'gc_collections'):.0f} ({_med(apps, 'gc_cpu_s') * 1000:.1f} ms of "
            f"the GUI thread's CPU), bare {_med(bares, 'gc_collections'):.0f} "
            f"({_med(bares, 'gc_cpu_s') * 1000:.1f} ms); the driver imports "
            "`qoder_desktop.ui.app` with collection on (`python -m qoder_desktop` pauses it "
            "in `main()` before that import and until the frame: none run there)",
            f"RSS at the first frame: app {rss:.0f} MB, bare window {bare_rss:.0f} MB "
            f"({rss / bare_rss:.2f}x)",
            f"modules loaded at the first frame: app {_med(apps, 'modules'):.0f} (pydantic "
            f"{'among them' if _med(apps, 'pydantic') else 'not yet'}), bare window "
            f"{_med(bares, 'modules'):.0f}",
            f"without cached bytecode (PYTHONDONTWRITEBYTECODE: the app's own modules "
            f"compiled at every start; the figure before this was measured so): frame med "
            f"{_med(uncached, 'frame'):.3f} s (n={len(uncached)}, interleaved)",
            f"offscreen (context, the figure before the start-up work): showEvent med "
            f"{_med(offscreen, 'shown'):.3f} s, first frame med {_med(offscreen, 'frame'):.3f} s"
            f" (n={len(offscreen)})",
            f"`python -c pass` {empty:.3f} s; import self time by package (ms, -X "
            "importtime): " + ", ".join(f"{name} {ms:.0f}" for name, ms in imports),
            "frame = the next loop turn after the first paint event that follows the "
            "window's expose (the backing store is flushed to X by then)"],
        floor=floor, floor_label="bare PySide6 window, same size"),
        Figure("cold start, first launch (creates the database; xcb)", "s",
               {"value": first["frame"]}, "", "INFO",
               ["the very first start of the run, not in the row above: a new "
                "QODER_DESKTOP_HOME, so the database and settings are created"])]


def main() -> None:
    """Entry point (python -m benchmarks.bench_cold_start)."""
    args = parse_args()
    setup_env()
    emit(run(3 if args.quick else 7), args.out)


if __name__ == "__main__":
    main()
