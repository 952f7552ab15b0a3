"""Shared helpers: statistics, result records, the event-loop heartbeat, the app under test.

Every benchmark module runs in its own process (see `benchmarks.__main__`), calls
`setup_env()` before importing Qt, and ends with `emit(results)`, which writes its
`Figure`s as JSON to the file named by ``--out`` (and prints them when run alone).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
"""Scenario files used only by the benchmarks (not shipped with the app)."""
REPO_ROOT = Path(__file__).resolve().parent.parent


def child_env(**extra: str) -> dict[str, str]:
    """This environment, with the repository on PYTHONPATH (for ``-m benchmarks.…``)."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if part)
    return env

def private_gateway_port(qoder_home: Path) -> int:
    """Write `qoder_home`'s settings with the approval gateway on a free loopback port;
    returns it. An app a benchmark starts then never meets another app of this machine
    on the default port: its port-squat probe would be the other gateway's first agent
    connection (loading that one's HTTP stack), or it would find the port taken and run
    no gateway at all."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    config = qoder_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"gateway_port": port}), encoding="utf-8")
    return port


now = time.perf_counter
"""The clock of every in-process measurement (CLOCK_MONOTONIC on Linux)."""


def setup_env(home: Path | None = None) -> Path:
    """Offscreen Qt, a private QODER_DESKTOP_HOME and HOME, and the app's lean imports
    (`ui.lean_imports`); returns the scratch root."""
    root = home or Path(tempfile.mkdtemp(prefix="qoder-bench-"))
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ["QODER_DESKTOP_HOME"] = str(root / "qoder-home")
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
    user_home = root / "home"
    user_home.mkdir(parents=True, exist_ok=True)
    os.environ["HOME"] = str(user_home)
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                     ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache")):
        os.environ[var] = str(user_home / sub)
    for var in ("ANTHROPIC_API_KEY", "QODER_PERSONAL_ACCESS_TOKEN"):
        os.environ.pop(var, None)
    from qoder_desktop.ui.lean_imports import apply_lean_imports

    apply_lean_imports()  # as the app's entry point does, before Qt and the libraries load
    return root


def log(message: str) -> None:
    """Progress on stderr (the results go to the --out file)."""
    print(f"  {message}", file=sys.stderr, flush=True)


# -- statistics -----------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    pos = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize(values: Sequence[float]) -> dict[str, float]:
    """n, median, p95, min, max, mean of `values`."""
    if not values:
        return {"n": 0}
    return {"n": len(values), "median": statistics.median(values),
            "p95": percentile(values, 95), "min": min(values), "max": max(values),
            "mean": statistics.fmean(values)}


# -- results --------------------------------------------------------------------------


_SHORT = {"median": "med", "p95": "p95", "max": "max"}


@dataclass
class Figure:
    """One row of the final table.

    Attributes:
        name: the figure (e.g. "request → dialog visible").
        unit: "ms", "µs", "s", "MB" or "x" (a ratio).
        stats: `summarize()` output, or {"value": v} for a single number.
        target: the target as text ("p95 ≤ 16 ms").
        verdict: "PASS", "MISS" or "INFO" (no target: context only).
        notes: short extra facts shown under the table.
        floor: the same measurement of the least the platform can do (a bare window, a
            bare QDialog, a bare SDK callback), taken in the same run, interleaved;
            `summarize()` output or {"value": v}; empty when there is no floor.
        floor_label: what the floor is ("bare QDialog, same size").
        judged: the statistic the target and the ratio use ("median", "p95", "max" or
            "value").
    """

    name: str
    unit: str
    stats: dict[str, float]
    target: str = ""
    verdict: str = "INFO"
    notes: list[str] = field(default_factory=list)
    floor: dict[str, float] = field(default_factory=dict)
    floor_label: str = ""
    judged: str = "median"

    def _pick(self, stats: dict[str, float]) -> float | None:
        key = "value" if "value" in stats else self.judged
        value = stats.get(key)
        return None if value is None else float(value)

    def ratio(self) -> float | None:
        """now / floor on the judged statistic (None without a floor)."""
        now_value, floor_value = self._pick(self.stats), self._pick(self.floor)
        if now_value is None or not floor_value:
            return None
        return now_value / floor_value

    def floor_text(self) -> str:
        """The floor column: the judged statistic of the floor, and what the floor is."""
        value = self._pick(self.floor)
        if value is None:
            return "—"
        key = "" if "value" in self.floor else f"{_SHORT.get(self.judged, self.judged)} "
        return f"{key}{fmt(value, self.unit)} ({self.floor_label})"

    def ratio_text(self) -> str:
        """The ratio column ("2.41x" or "—")."""
        ratio = self.ratio()
        return "—" if ratio is None else f"{ratio:.2f}x"

    def measured(self) -> str:
        """The measured column: median, p95 and spread, or the single value."""
        s = self.stats
        if "value" in s:
            if "low" in s and "high" in s:
                return (f"{fmt(s['value'], self.unit)} (pairs "
                        f"{fmt(s['low'], self.unit)}–{fmt(s['high'], self.unit)})")
            return fmt(s["value"], self.unit)
        if not s.get("n"):
            return "no samples"
        return (f"med {fmt(s['median'], self.unit)}, p95 {fmt(s['p95'], self.unit)}, "
                f"{fmt(s['min'], self.unit)}–{fmt(s['max'], self.unit)} (n={s['n']})")


def fmt(value: float, unit: str) -> str:
    """A number with its unit, with sensible precision."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if unit == "x":
        return f"{value:.3f}x"
    if unit == "count":
        return f"{value:,.0f}"
    digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
    return f"{value:.{digits}f} {unit}"


def judge(value: float, limit: float) -> str:
    """PASS when value ≤ limit."""
    return "PASS" if value <= limit else "MISS"


def parse_args(extra: Callable[[argparse.ArgumentParser], Any] | None = None,
               ) -> argparse.Namespace:
    """The arguments every benchmark module takes (--out, --quick)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", help="write the figures as JSON here")
    parser.add_argument("--quick", action="store_true", help="fewer samples (smoke run)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile")
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def emit(figures: Iterable[Figure], out: str | None) -> None:
    """Write the figures to `out` (JSON), or print them when run alone."""
    rows = [asdict(f) for f in figures]
    if out:
        Path(out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
        return
    for row in rows:
        figure = Figure(**row)
        print(f"{figure.name:<48} {figure.measured():<58} {figure.floor_text():<40} "
              f"{figure.ratio_text():<7} {figure.target:<18} {figure.verdict}")
        for note in figure.notes:
            print(f"    {note}")


def rss_mb() -> float:
    """This process's resident set size (VmRSS) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return math.nan


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system, plus reaped children) of a process; this one by default."""
    if pid is None:
        times = os.times()
        return times.user + times.system + times.children_user + times.children_system
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(value) for value in fields[11:15]) / ticks


def profile_to_stderr(profiler: Any, limit: int = 25) -> None:
    """Print a cProfile's top functions by cumulative time to stderr."""
    import pstats

    stats = pstats.Stats(profiler, stream=sys.stderr)
    stats.sort_stats("cumulative").print_stats(limit)
    stats.sort_stats("tottime").print_stats(limit)


def scenario_library(*names: str) -> Any:
    """The shipped scenarios plus the benchmark scenarios `names` (from benchmarks/scenarios)."""
    from qoder_desktop.scripted_model.scenario import ScenarioLibrary, load_scenario_file

    return ScenarioLibrary([load_scenario_file(SCENARIO_DIR / f"{n}.json") for n in names])


def stop_process(process: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """End a child process (of a benchmark or a test helper): SIGTERM, SIGKILL after
    `timeout` s; return once it has ended."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
