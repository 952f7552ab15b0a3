"""Run every benchmark, each in its own process, and print one table.

    .venv/bin/python -m benchmarks            # the full run (about 6–8 minutes on 2 cores)
    .venv/bin/python -m benchmarks --quick    # fewer samples, a smoke run
    .venv/bin/python -m benchmarks --only dialog,queue

Times are never asserted: each figure prints PASS or MISS against its target. The exit
status is 0 unless a benchmark crashed or produced no figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO_ROOT, Figure, child_env

BENCHMARKS = {
    "cold_start": "process start → first frame of the main window (xcb, private Xvfb)",
    "memory": "RSS with 10 idle sessions",
    "memory_live": "RSS of qoder-desktop --demo, first dialog open (xcb, private Xvfb)",
    "dialog": "request → dialog visible, withdrawn → hidden (offscreen)",
    "dialog_xcb": "request → dialog visible, withdrawn → hidden (xcb, private Xvfb)",
    "preview": "1 MB markdown / HTML, pathological nesting",
    "large_input": "approval dialog: 10 KB/1,000 findings … 4 MiB, open and edit",
    "interrupt": "interrupt through the real CLI → dialog closed",
    "queue": "1,000 pending over 50 sessions; rule match",
    "overhead": "200 rule-allowed calls, app vs bare callback",
    "terminal_hooks": "terminal hook → broker, answer → exit, fall-through",
    "remote": "remote hook over the ssh tunnel vs on the desk, reconnect, 10 hosts (root)",
    "soak": "10,000 requests over the three ways in: RSS, Qt objects, tasks, fds (offscreen)",
    "soak_xcb": "the soak's sample on a private Xvfb, real arming delay",
    "history": "history window on a 100,000-row ledger: open, filter (xcb, private Xvfb)",
    "away": "Away mode, 100 waiting: request → on the phone, answer → agent (TLS, Python phone)",
    "away_page": "phone page in Chromium, 100 waiting: request → visible, answer → agent "
                 "unblocked",
}
TIMEOUT_S = 900
LONG_TIMEOUT_S = {"soak": 2400}
"""Modules that may run longer than `TIMEOUT_S` on a busy machine (the soak: ~10 minutes
alone, more when others share the cores)."""
MODULES = {"dialog_xcb": ("dialog", ["--platform", "xcb"]),
           "soak_xcb": ("soak", ["--platform", "xcb"])}
"""Table entries that run a module with extra arguments."""


def machine() -> str:
    """One line about where the numbers come from."""
    try:
        from importlib.metadata import version

        import PySide6

        versions = (f"PySide6 {PySide6.__version__}, "
                    f"claude-agent-sdk {version('claude-agent-sdk')}")
    except Exception:
        versions = ""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{platform.node()} · {os.cpu_count()} CPUs · Python {platform.python_version()} · "
            f"{versions} · load average {load}")


def run_one(name: str, quick: bool) -> tuple[list[Figure], str | None, float]:
    """Run `benchmarks.bench_<name>` in a subprocess; (figures, error, seconds)."""
    with tempfile.TemporaryDirectory(prefix="qoder-bench-out-") as folder:
        out = Path(folder) / "figures.json"
        module, extra = MODULES.get(name, (name, []))
        timeout = LONG_TIMEOUT_S.get(name, TIMEOUT_S)
        argv = [sys.executable, "-m", f"benchmarks.bench_{module}", "--out", str(out), *extra]
        if quick:
            argv.append("--quick")
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, timeout=timeout, check=False, cwd=REPO_ROOT,
                                  env=child_env())
            code: int | str = done.returncode
        except subprocess.TimeoutExpired:
            code = f"timed out after {timeout} s"
        seconds = time.perf_counter() - start
        if code == 0 and out.exists():
            return [Figure(**row) for row in json.loads(out.read_text())], None, seconds
        return [], f"exit status {code}" if out.exists() else f"crashed ({code})", seconds


def print_table(figures: list[Figure], errors: dict[str, str]) -> None:
    """The final table: figure | now | floor | ratio | target | result, then the notes."""
    widths = (58, 52, 44, 7, 17)
    header = ("figure", "now (median, p95, min–max)", "floor, same run", "ratio", "target")
    line = "-" * (sum(widths) + 3 * len(widths) + 6)
    print(line)
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " | result")
    print(line)
    for figure in figures:
        cells = (figure.name, figure.measured(), figure.floor_text(), figure.ratio_text(),
                 figure.target)
        print(" | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
              + f" | {figure.verdict}")
    for name, error in errors.items():
        cells = ("bench_" + name, error, "", "", "")
        print(" | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " | ERROR")
    print(line)
    print()
    for figure in figures:
        if figure.notes:
            print(f"{figure.name}:")
            for note in figure.notes:
                print(f"    {note}")


def markdown_table(figures: list[Figure]) -> str:
    """The table as Markdown (figure / now / floor / ratio / target / result)."""
    rows = ["| figure | now | floor, same run | ratio | target | result |",
            "|---|---|---|---|---|---|"]
    rows += [f"| {f.name} | {f.measured()} | {f.floor_text()} | {f.ratio_text()} | "
             f"{f.target} | {f.verdict} |" for f in figures]
    return "\n".join(rows)


def main() -> int:
    """Run the chosen benchmarks; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer samples (smoke run)")
    parser.add_argument("--only", default="", help="comma-separated: " + ", ".join(BENCHMARKS))
    parser.add_argument("--markdown", help="also write the table as Markdown to this file")
    args = parser.parse_args()
    chosen = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHMARKS)
    unknown = [n for n in chosen if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    print(f"Qoder Desktop benchmarks — {machine()}", flush=True)
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    total = time.perf_counter()
    for name in chosen:
        print(f"[{name}] {BENCHMARKS[name]} …", flush=True)
        rows, error, seconds = run_one(name, args.quick)
        figures.extend(rows)
        if error:
            errors[name] = error
        print(f"[{name}] {'ERROR: ' + error if error else 'done'} in {seconds:.0f} s",
              flush=True)
    print()
    print(f"Results ({time.perf_counter() - total:.0f} s; {machine()})")
    print_table(figures, errors)
    if args.markdown:
        Path(args.markdown).write_text(
            f"{markdown_table(figures)}\n\nMachine: {machine()}\n", encoding="utf-8")
    misses = sum(f.verdict == "MISS" for f in figures)
    print(f"\n{sum(f.verdict == 'PASS' for f in figures)} PASS, {misses} MISS, "
          f"{len(errors)} ERROR")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
