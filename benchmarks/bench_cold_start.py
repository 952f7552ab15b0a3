"""Cold start: process start → main window shown, for `python -m qoder_desktop` offscreen.

Each run spawns `benchmarks/cold_start_driver.py` (which runs the real entry point with
the show event patched to report a timestamp) with a private QODER_DESKTOP_HOME. The
first run creates the database (first launch); later runs reuse it (a normal start, with
the OS file cache warm). Baselines in the same run: an empty interpreter, and importing
PySide6.QtWidgets. `-X importtime` names the slowest imports.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Figure, emit, judge, log, parse_args, setup_env, summarize

TARGET_S = 1.0
DRIVER = Path(__file__).resolve().parent / "cold_start_driver.py"


def child_env(home: Path) -> dict[str, str]:
    """Offscreen, private home (its gateway on a free port), no inherited secrets."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = home / "qoder" / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"gateway_port": port}), encoding="utf-8")
    env = dict(os.environ)
    env.update({"QT_QPA_PLATFORM": "offscreen", "QODER_DESKTOP_HOME": str(home / "qoder"),
                "HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run")})
    (home / "run").mkdir(exist_ok=True, mode=0o700)
    for name in ("ANTHROPIC_API_KEY", "QODER_PERSONAL_ACCESS_TOKEN"):
        env.pop(name, None)
    return env


def launch(env: dict[str, str]) -> dict[str, float]:
    """One start; returns seconds from spawn to interpreter, shown, painted, and import."""
    start = time.clock_gettime(time.CLOCK_MONOTONIC)
    done = subprocess.run([sys.executable, str(DRIVER)], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"the app did not report its window (rc {done.returncode}):\n"
                           f"{done.stderr[-2000:]}")
    marks = json.loads(lines[-1])
    return {"interpreter": marks["main"] - start, "import": marks["import_s"],
            "shown": marks["shown"] - start, "painted": marks["painted"] - start}


def wall(argv: list[str], env: dict[str, str]) -> float:
    """Wall time of a short command (s)."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True, timeout=60)
    return time.perf_counter() - start


def slowest_imports(env: dict[str, str], count: int = 8) -> list[tuple[str, float]]:
    """Packages by summed self import time of `qoder_desktop.ui.app` (ms), slowest first."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import qoder_desktop.ui.app"],
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


def run(runs: int) -> list[Figure]:
    """First launch, then `runs` normal starts, plus baselines."""
    home = Path(tempfile.mkdtemp(prefix="qoder-bench-cold-"))
    env = child_env(home)
    first = launch(env)
    starts = [launch(env) for _ in range(runs)]
    log(f"first launch {first['shown']:.3f} s; starts: "
        + ", ".join(f"{s['shown']:.3f}" for s in starts))
    empty = min(wall([sys.executable, "-c", "pass"], env) for _ in range(3))
    qt = min(wall([sys.executable, "-c", "import PySide6.QtWidgets"], env) for _ in range(3))
    imports = slowest_imports(env)

    def med(key: str) -> float:
        return summarize([s[key] for s in starts])["median"]

    shown = summarize([s["shown"] for s in starts])
    return [Figure("cold start: process start → main window shown", "s", shown,
                   f"≤ {TARGET_S:g} s", judge(shown["median"], TARGET_S), [
        f"first launch (creates the database): {first['shown']:.3f} s; first paint med "
        f"{med('painted'):.3f} s",
        f"of which: interpreter up med {med('interpreter'):.3f} s, `import "
        f"qoder_desktop.ui.app` med {med('import'):.3f} s, the rest (QApplication, storage, "
        f"window) med {med('shown') - med('import') - med('interpreter'):.3f} s",
        f"baselines: `python -c pass` {empty:.3f} s, `import PySide6.QtWidgets` {qt:.3f} s",
        "import self time by package (ms, -X importtime): "
        + ", ".join(f"{name} {ms:.0f}" for name, ms in imports),
        "OS file cache warm after the first launch (caches are not dropped)"])]


def main() -> None:
    """Entry point (python -m benchmarks.bench_cold_start)."""
    args = parse_args()
    setup_env()
    emit(run(3 if args.quick else 7), args.out)


if __name__ == "__main__":
    main()
