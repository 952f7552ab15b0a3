"""Memory: RSS of the app process with 10 idle sessions (the CLI processes excluded).

This process builds the app as `run_gui` does (main window shown, approval gateway
running, start-up's dialog warm-up and spare dialogs), then starts 10 Claude sessions
against the scripted model (own process) that play ``idle`` (one text reply) and sit idle.
VmRSS of this process only is read from /proc/self/status; the CLIs' RSS is reported for
context.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import Figure, emit, judge, log, parse_args, rss_mb, setup_env

TARGET_MB = 120.0
SESSIONS = 10


IMPORT_STEPS = (
    ("PySide6 + QApplication", "from PySide6.QtWidgets import QApplication; a = QApplication([])"),
    ("qoder_desktop.ui (asyncio, pydantic, our models; PySide6's import check made cheap)",
     "from qoder_desktop.ui.lean_imports import apply_lean_imports; apply_lean_imports()"),
    ("qasync", "import qasync"),
    ("pydantic + our models", "import qoder_desktop.domain.models"),
    ("claude_agent_sdk", "import claude_agent_sdk"),
    ("qoder_agent_sdk", "import qoder_agent_sdk"),
    ("approval gateway (its HTTP stack loads at the first agent connection)",
     "import qoder_desktop.gateway.server"),
    ("rest of qoder_desktop.ui.app", "import qoder_desktop.ui.app"),
)
STEP_SCRIPT = """
import os, sys
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024.0
steps = %r
previous = rss()
print('python', round(previous))
for name, code in steps:
    exec(code)
    now = rss()
    print(name, '+%%d' %% round(now - previous))
    previous = now
"""


def import_increments() -> str:
    """RSS added by each big import, in a fresh interpreter (MB)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", STEP_SCRIPT % (IMPORT_STEPS,)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    return ", ".join(line.rsplit(" ", 1)[0] + " " + line.rsplit(" ", 1)[1]
                     for line in done.stdout.splitlines() if line.strip())


def status_mb(field: str) -> float:
    """A field of /proc/self/status in MB (e.g. RssAnon, RssFile)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def what_holds() -> str:
    """Modules, sources kept by linecache, threads and Python's small-object arenas now."""
    import linecache
    import threading

    sources = [entry for entry in linecache.cache.values() if len(entry) == 4]
    chars = sum(len(line) for entry in sources for line in entry[2])
    threads = sorted({thread.name.rstrip("0123456789").rstrip("-_") or thread.name
                      for thread in threading.enumerate()})
    try:  # (absent from trees before the deferred imports: a "before" run)
        from qoder_desktop.diagnostics.deferred import DEFERRED_MODULES, DeferredModule
    except ImportError:
        DEFERRED_MODULES, DeferredModule = (), type(None)
    try:  # (and before the deferred submodules)
        from qoder_desktop.diagnostics.deferred import DEFERRED_SUBMODULES
    except ImportError:
        DEFERRED_SUBMODULES = {}
    unrun = [name for name in (*DEFERRED_MODULES, *DEFERRED_SUBMODULES)
             if isinstance(sys.modules.get(name), DeferredModule)]
    return (f"held: {len(sys.modules)} modules (imported, never run: "
            f"{', '.join(unrun) or 'none'}); linecache {len(sources)} files "
            f"({chars / 1e6:.1f} M characters); {threading.active_count()} threads "
            f"({', '.join(threads)})")


def proc_rss_mb(pid: int) -> float:
    """VmRSS of another process in MB (0 when gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def bare_window_rss(width: int, height: int) -> float:
    """RSS (MB) of a fresh bare PySide6 window of this size (offscreen), at its first frame."""
    from benchmarks.bench_cold_start import BARE_DRIVER, child_env, launch

    home = Path(tempfile.mkdtemp(prefix="qoder-bench-bare-"))
    env = child_env(home, "offscreen", None, bytecode=False)  # as measured before
    return launch(BARE_DRIVER, env, str(width), str(height))["rss_mb"]


async def run(base_url: str) -> list[Figure]:
    """Measure RSS before and after 10 idle sessions; returns the table row."""
    from benchmarks.bench_overhead import cli_pid
    from benchmarks.qt_support import build_desktop, warm_up_as_start_up
    from qoder_desktop.agents.hub import HubEvent
    from qoder_desktop.domain.session_options import SessionOptions, TranscriptKind

    before_app = rss_mb()
    desktop = build_desktop(base_url, gateway=True)
    await warm_up_as_start_up(desktop)  # the dialogs' warm-up and spares, as run_gui has
    await asyncio.sleep(1.0)
    gc.collect()
    app_only = rss_mb()
    idle: set[str] = set()

    def on_hub(event: HubEvent) -> None:
        if event.line is not None and event.line.kind in (TranscriptKind.RESULT,
                                                          TranscriptKind.ERROR):
            idle.add(event.session_id)

    desktop.hub.subscribe(on_hub)
    root = Path(tempfile.mkdtemp(prefix="qoder-bench-memory-"))
    infos: list[Any] = []
    for n in range(SESSIONS):
        workspace = root / f"ws-{n}"
        workspace.mkdir()
        infos.append(await desktop.hub.start_session(SessionOptions(
            prompt="Anything to do?", cwd=str(workspace), scenario="idle", name=f"idle {n}")))
    for _ in range(600):
        if len(idle) >= SESSIONS:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(2.0)
    gc.collect()
    await asyncio.sleep(0.5)
    with_sessions = rss_mb()
    anon, files = status_mb("RssAnon"), status_mb("RssFile")
    held = what_holds()
    cli = sum(proc_rss_mb(pid) for info in infos
              if (pid := cli_pid(getattr(desktop.hub._sessions[info.session_id], "_client",
                                         None))) is not None)
    log(f"RSS: interpreter+imports {before_app:.1f} MB, app {app_only:.1f} MB, "
        f"with {len(idle)}/{SESSIONS} idle sessions {with_sessions:.1f} MB "
        f"({anon:.1f} MB anonymous)")
    size = desktop.app.window.size()
    floors = [bare_window_rss(size.width(), size.height()) for _ in range(2)]
    await desktop.hub.stop_all()
    desktop.close()
    per_session = (with_sessions - app_only) / SESSIONS
    floor = sum(floors) / len(floors)
    return [Figure(f"memory: app RSS with {SESSIONS} idle sessions", "MB",
                   {"value": with_sessions}, f"≤ {TARGET_MB:g} MB",
                   judge(with_sessions, TARGET_MB), floor={"value": floor},
                   floor_label="bare PySide6 window, same size", notes=[
        f"floor: a fresh process showing an empty QMainWindow of the main window's size "
        f"({size.width()}×{size.height()}, offscreen, RSS at its first frame), twice: "
        + ", ".join(f"{mb:.0f}" for mb in floors) + " MB",
        f"app shown, no session: {app_only:.0f} MB (Python, Qt and QApplication before the app: "
        f"{before_app:.0f} MB); per idle session +{per_session:.1f} MB; "
        f"{len(idle)}/{SESSIONS} sessions idle",
        f"RSS = {anon:.0f} MB anonymous (heap) + {files:.0f} MB file-backed (shared "
        "libraries: Qt, Python extensions)",
        f"RSS added per import, fresh interpreter (MB): {import_increments()}",
        held,
        f"excluded: the {SESSIONS} CLI processes hold {cli:.0f} MB RSS together"])]


def main() -> None:
    """Entry point (python -m benchmarks.bench_memory)."""
    args = parse_args()
    setup_env()
    # The app's entry point imports qoder_desktop.ui before PySide6 (run_gui is in it), so
    # PySide6's import check never reads a module through linecache; importing PySide6
    # first kept ~15 sources (~0.4 MB) that the app does not hold.
    importlib.import_module("qoder_desktop.ui")
    import benchmarks.qt_support  # noqa: F401 (Qt loaded before the first reading)
    from benchmarks.model_server import external_model
    from benchmarks.qt_support import hard_exit, run_qasync

    with external_model() as base_url:
        rows = run_qasync(lambda: run(base_url))
    emit(rows, args.out)
    hard_exit(0)


if __name__ == "__main__":
    main()
