"""Terminal hooks: how fast the hook command reaches the app and gets out of the way.

The hook is a real process, started cold each time as the CLI starts it
(``<python> -m qoder_desktop hook permission-request --agent claude``, the request on
stdin); the app side is the terminal hook server, broker and hub on this process's
asyncio loop. Figures:

- hook start → request in the broker (spawn → the broker's ADDED event);
- answer → hook exits (``broker.answer`` → the process is gone);
- give up → hook exits (the app's wait runs out → the process is gone, printing nothing);
- app not running → hook exits (the whole process, spawn → exit, printing nothing);
- baseline: an empty interpreter (``python -c pass``), spawn → exit.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import Figure, emit, judge, log, now, parse_args, setup_env, summarize

HOOK = [sys.executable, "-m", "qoder_desktop", "hook", "permission-request", "--agent", "claude"]
EVENT = json.dumps({
    "hook_event_name": "PermissionRequest", "session_id": "bench-session", "cwd": "/tmp",
    "permission_mode": "default", "tool_name": "Bash",
    "tool_input": {"command": "touch f.txt"}, "permission_suggestions": []}).encode()


async def _spawn() -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        *HOOK, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL)
    assert process.stdin is not None
    process.stdin.write(EVENT)
    process.stdin.close()
    return process


async def measure(samples: int, root: Path) -> list[Figure]:
    """Run every figure `samples` times."""
    from qoder_desktop.agents.hub import SessionHub
    from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
    from qoder_desktop.domain.models import ApprovalRequest, Decision
    from qoder_desktop.store.database import Database
    from qoder_desktop.store.ledger import Ledger
    from qoder_desktop.terminal.server import TerminalHookServer

    db = Database.open(root / "bench.sqlite3")
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, lambda *a: None)  # type: ignore[arg-type,return-value]
    added: asyncio.Queue[tuple[float, ApprovalRequest]] = asyncio.Queue()
    withdrawn: asyncio.Queue[float] = asyncio.Queue()

    def on_event(event: BrokerEvent, request: ApprovalRequest, _d: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            added.put_nowait((now(), request))
        elif event is BrokerEvent.WITHDRAWN:
            withdrawn.put_nowait(now())

    broker.subscribe(on_event)
    reach, leave, give_up, fall_through, baseline = [], [], [], [], []
    wait = 0.3
    server = TerminalHookServer(broker, hub, wait_seconds=lambda: wait, follow_transcripts=False)
    await server.start()
    for _ in range(samples):
        wait = 30.0
        start = now()
        process = await _spawn()
        at, request = await asyncio.wait_for(added.get(), 30)
        reach.append((at - start) * 1000)
        answered = now()
        broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
        out = await process.stdout.read() if process.stdout else b""
        await process.wait()
        leave.append((now() - answered) * 1000)
        assert b'"allow"' in out, out
        wait = 0.3
        process = await _spawn()
        await asyncio.wait_for(added.get(), 30)
        gave_up = await asyncio.wait_for(withdrawn.get(), 30)
        out = await process.stdout.read() if process.stdout else b""
        await process.wait()
        give_up.append((now() - gave_up) * 1000)
        assert out == b"", out
    await server.stop()
    for _ in range(samples):
        start = now()
        process = await _spawn()
        out = await process.stdout.read() if process.stdout else b""
        await process.wait()
        fall_through.append((now() - start) * 1000)
        assert out == b""
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        baseline.append((time.perf_counter() - start) * 1000)
    db.close()
    rows = [("hook start → request in the broker", reach, 150.0),
            ("answer → hook exits", leave, 50.0),
            ("app gives up → hook exits (prints nothing)", give_up, 150.0),
            ("app not running → hook exits (whole process)", fall_through, 150.0)]
    figures = [Figure(name, "ms", summarize(values), f"p95 ≤ {limit:g} ms",
                      judge(summarize(values)["p95"], limit)) for name, values, limit in rows]
    figures.append(Figure("baseline: python -c pass (spawn → exit)", "ms", summarize(baseline),
                          notes=["The hook's own cost is its figure minus this baseline."]))
    return figures


def main() -> int:
    """Run the benchmark and print or write its figures."""
    args = parse_args()
    root = setup_env()
    samples = 5 if args.quick else 20
    log(f"terminal hooks: {samples} samples each")
    emit(asyncio.run(measure(samples, root)), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
