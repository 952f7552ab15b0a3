"""A week on the desk: 10,000 requests through the three ways in, then what was left behind.

The app as `run_gui` wires it (`DesktopApp` on the qasync loop, real SQLite store and its
writer thread, start-up's dialog warm-up and spares, the terminal hook server on its Unix
socket, the MCP approval gateway on loopback) takes requests in rounds. Each round, side
by side:

- SDK sessions (half the round): Claude and Qoder sessions started and stopped through the
  app, their real adapters and SDKs on a scripted CLI peer (`soak_load.SdkSessions`);
- gateway agents (a quarter): real MCP clients, one MCP session per 25 calls, and
- terminal agents (a quarter): the hook's own protocol code over the socket, one CLI
  session id (with its transcript file) per 25 calls, a few as the real hook process —
  both from a separate process (`soak_agents`), so their memory is not the app's;
- every few rounds, one session of the real Claude Code CLI on the scripted model.

Every request is answered by a click in its dialog (`soak_load.Person`). Offscreen, the
dialogs' arming delay is 0 so 10,000 answers fit in minutes (a person's 400 ms would take
67 minutes of waiting alone); ``--platform xcb`` runs a smaller sample on a private Xvfb
with the real 400 ms delay.

After each round, with nothing pending and every session of the round stopped, a
checkpoint: RSS (before and after the app's idle trim), the QObjects reachable from the
application and its top-level widgets, asyncio tasks, threads, file descriptors (after a
garbage collection, as the app's own collector would run). The first rounds are warm-up;
the judged figures compare the last checkpoint with the one after warm-up, and the
dialog-open and ledger-write p95 of the last round with the first measured round.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import (
    REPO_ROOT,
    Figure,
    child_env,
    emit,
    judge,
    log,
    now,
    parse_args,
    setup_env,
    summarize,
)
from benchmarks.soak_measure import Checkpoint, LedgerTimer, RoundTimes, checkpoint, take

SHARE = {"sdk": 0.5, "gateway": 0.25, "terminal": 0.25}
"""How a round's requests are split over the three ways in."""
RSS_GROWTH_MB = 5.0
P95_RATIO = 1.2


class Agents:
    """The outside agents' process (`soak_agents`): one plan per round, one tally back."""

    def __init__(self, gateway_url: str, token: str) -> None:
        env = child_env(QODER_SOAK_GATEWAY_TOKEN=token)
        self.gateway_url = gateway_url
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.soak_agents"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=env)
        assert self.process.stdout is not None
        ready = json.loads(self.process.stdout.readline())
        assert ready.get("ready"), ready

    async def play(self, plan: dict[str, Any]) -> dict[str, Any]:
        """Send a round's plan; its tallies once the round is played."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({**plan, "gateway_url": self.gateway_url}) + "\n")
        self.process.stdin.flush()
        line = await asyncio.to_thread(self.process.stdout.readline)
        if not line:
            raise RuntimeError("the agents' process ended")
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        """End the process (end of its input)."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Soak:
    """The soak's result: checkpoints, per-round times, tallies."""

    checkpoints: list[Checkpoint] = field(default_factory=list)
    rounds: list[RoundTimes] = field(default_factory=list)
    tallies: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    cli_requests: int = 0
    cli_sessions: int = 0
    sdk_sessions: int = 0
    answered: int = 0
    denied: int = 0
    warm_up: int = 1
    load: list[tuple[float, float]] = field(default_factory=list)
    seconds: float = 0.0


def _share(total: int) -> dict[str, int]:
    sdk = int(total * SHARE["sdk"])
    gateway = int(total * SHARE["gateway"])
    return {"sdk": sdk, "gateway": gateway, "terminal": total - sdk - gateway}


async def run(requests: int, rounds: int, warm_up: int, cli_every: int, platform: str,
              base_url: str | None) -> Soak:
    """Play the soak; returns what it measured."""
    from benchmarks.qt_support import build_desktop, warm_up_as_start_up
    from benchmarks.soak_load import Person, SdkSessions, real_cli_session
    from qoder_desktop.domain.models import Backend
    from qoder_desktop.terminal.server import TerminalHookServer

    workspace = Path(tempfile.mkdtemp(prefix="qoder-soak-"))
    # Terminal agents write their transcripts where Claude Code does, under a scratch
    # config folder (never the person's ~/.claude): the hook server follows only those.
    os.environ["CLAUDE_CONFIG_DIR"] = str(workspace / "claude-config")
    sdk = SdkSessions(workspace)
    desktop = build_desktop(base_url, gateway=True, wrap_factory=sdk.factory)
    sdk.desktop = desktop
    settings = desktop.app.current_settings
    desktop.app.start_terminal_hooks(TerminalHookServer(
        desktop.broker, desktop.hub, wait_seconds=lambda: settings.value.terminal_wait_seconds))
    await warm_up_as_start_up(desktop)
    servers = desktop.app.servers
    while servers.gateway is None or not servers.gateway.running or servers.terminal_hooks is None:
        await asyncio.sleep(0.01)
    token = desktop.app.gateway_token.reveal()
    agents = Agents(servers.gateway.url, token)
    timer = LedgerTimer(desktop.ledger)
    person = Person(desktop)
    person.start()
    result = Soak(warm_up=warm_up)
    own = {asyncio.current_task(), person.task}
    per_round = max(1, requests // rounds)
    per_session = max(2, min(25, per_round // 8))
    done = 0
    started = now()
    result.checkpoints.append(await checkpoint(desktop, 0, 0, own))
    log(result.checkpoints[-1].line())
    for number in range(1, rounds + 1):
        share = _share(per_round)
        half = share["sdk"] // 2
        plan = {"round": number, "gateway": share["gateway"], "terminal": share["terminal"],
                "per_session": per_session, "hook_processes": 1, "lanes": 2}
        outside, *_ = await asyncio.gather(
            agents.play(plan),
            sdk.lane(Backend.CLAUDE, half, per_session),
            sdk.lane(Backend.QODER, share["sdk"] - half, per_session))
        for way in ("gateway", "terminal"):
            tally = result.tallies.setdefault(way, {})
            for key, value in outside[way].items():
                tally[key] = tally.get(key, 0) + value
        result.errors += outside["errors"]
        done += per_round
        if base_url is not None and cli_every and number % cli_every == 0:
            result.cli_requests += await real_cli_session(desktop, workspace)
            result.cli_sessions += 1
        while desktop.broker.pending():
            await asyncio.sleep(0.01)
        result.rounds.append(RoundTimes(take(person.open_ms), take(timer.samples),
                                        take(timer.waits)))
        result.load.append(os.getloadavg()[:2])
        result.checkpoints.append(await checkpoint(desktop, number, done, own))
        result.checkpoints[-1].seconds = now() - started
        log(result.checkpoints[-1].line())
    result.seconds = now() - started
    result.tallies["sdk"] = dict(sdk.outcomes)
    result.sdk_sessions = sdk.sessions
    result.answered, result.denied = person.answered, person.denied
    await person.stop()
    agents.close()
    await desktop.app.servers.stop()
    await desktop.hub.stop_all()
    desktop.close()
    return result


def _pooled(rounds: list[RoundTimes]) -> RoundTimes:
    pooled = RoundTimes()
    for times in rounds:
        pooled.dialog_open += times.dialog_open
        pooled.ledger_write += times.ledger_write
        pooled.decision_wait += times.decision_wait
    return pooled


def figures(soak: Soak, platform: str) -> list[Figure]:
    """The table rows: start (after warm-up) against end, each with its target."""
    base, end = soak.checkpoints[soak.warm_up], soak.checkpoints[-1]
    tag = f"soak ({platform})"
    series = {name: " → ".join(str(getattr(c, name)) for c in soak.checkpoints)
              for name in ("qobjects", "tasks", "fds", "threads", "sessions", "frozen")}
    rss_series = " → ".join(f"{c.rss_trimmed_mb:.1f}" for c in soak.checkpoints)
    untrimmed_series = " → ".join(f"{c.rss_mb:.1f}" for c in soak.checkpoints)
    start_label = f"after warm-up, {base.requests} requests"
    growth = end.rss_trimmed_mb - base.rss_trimmed_mb
    rows = [Figure(
        f"{tag}: RSS after {end.requests:,} requests (after the app's idle trim)", "MB",
        {"value": end.rss_trimmed_mb}, f"≤ +{RSS_GROWTH_MB:g} MB",
        judge(growth, RSS_GROWTH_MB), [
            f"growth after warm-up {growth:+.1f} MB; per round: {rss_series}",
            f"before the idle trim (freed heap pages glibc still holds): growth "
            f"{end.rss_mb - base.rss_mb:+.1f} MB; per round: {untrimmed_series}",
            f"transcript lines the hub keeps (running sessions, ended ones' tails): "
            f"{base.transcript_lines} after warm-up, {end.transcript_lines} at the end",
            f"{soak.answered} answered in dialogs ({soak.denied} denied), in "
            f"{soak.seconds:.0f} s; SDK {soak.tallies.get('sdk')}, gateway "
            f"{soak.tallies.get('gateway')}, terminal {soak.tallies.get('terminal')}; "
            f"{soak.sdk_sessions} SDK sessions started and stopped, real CLI: "
            f"{soak.cli_sessions} sessions, {soak.cli_requests} requests; "
            f"{len(soak.errors)} errors {soak.errors[:2]}",
            "load average (1, 5 min) after each round: "
            + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in soak.load)],
        floor={"value": base.rss_trimmed_mb}, floor_label=start_label)]
    for name, attr in (
            ("live Qt objects (reachable from the app and its windows)", "qobjects"),
            ("asyncio tasks", "tasks"), ("open file descriptors", "fds")):
        start_value, end_value = getattr(base, attr), getattr(end, attr)
        rows.append(Figure(
            f"{tag}: {name}", "count", {"value": end_value}, "no growth",
            judge(end_value - start_value, 0), [f"per round: {series[attr]}"],
            floor={"value": start_value}, floor_label=start_label))
    measured = soak.rounds[soak.warm_up:]
    span = 2 if len(measured) >= 6 else 1
    first, last = _pooled(measured[:span]), _pooled(measured[-span:])
    window = "first measured round" if span == 1 else f"first {span} measured rounds"
    for name, start_values, end_values, note in (
            ("dialog open p95 (due → painted), end vs start", first.dialog_open,
             last.dialog_open, "due = the request arrived, or the dialog before it was answered "
             "(the dialog's decided) or its request withdrawn, whichever came later; painted = "
             f"the loop turn after the dialog's first paint; end = the last {span} round(s)"),
            ("ledger write p95 (SQLite, writer thread), end vs start",
             first.ledger_write, last.ledger_write,
             "record_request + record_decision on the store's writer thread (synchronous=FULL: "
             f"each commit waits for the disk); end = the last {span} round(s); the disk's own "
             f"floor (bare insert + commit beside it) p95 {base.disk_p95_ms:.2f} ms after "
             f"warm-up, {end.disk_p95_ms:.2f} ms at the end"),
    ):
        start_stats, end_stats = summarize(start_values), summarize(end_values)
        ratio = end_stats.get("p95", 0.0) / start_stats["p95"] if start_stats.get("p95") else 0.0
        rows.append(Figure(
            f"{tag}: {name}", "ms", end_stats, f"≤ {P95_RATIO:g}× start", judge(ratio, P95_RATIO),
            [note], floor=start_stats, floor_label=window, judged="p95"))
    waits_first, waits_last = summarize(first.decision_wait), summarize(last.decision_wait)
    rows.append(Figure(
        f"{tag}: decision write awaited by the broker, last round vs first", "ms", waits_last,
        "", "INFO", ["Ledger.write_decision: queued on the writer thread → committed → "
                     "back on the loop"],
        floor=waits_first, floor_label=window, judged="p95"))
    rows.append(Figure(
        f"{tag}: threads, sessions in the hub, gc-frozen objects", "count",
        {"value": end.threads}, "", "INFO",
        [f"threads: {series['threads']}", f"sessions the hub lists: {series['sessions']}",
         f"objects frozen out of garbage collection (gc.freeze): {series['frozen']}"],
        floor={"value": base.threads}, floor_label=start_label))
    return rows


def main() -> None:
    """Entry point (python -m benchmarks.bench_soak [--quick] [--platform xcb])."""
    def extra(parser: Any) -> None:
        parser.add_argument("--platform", choices=("offscreen", "xcb"), default="offscreen")
        parser.add_argument("--requests", type=int, help="total requests (default: 10,000)")
        parser.add_argument("--rounds", type=int, help="checkpoints (default: 20)")
        parser.add_argument("--cli-every", type=int, help="a real CLI session every N rounds")
        parser.add_argument("--checkpoints", help="also write every checkpoint here (JSON)")

    args = parse_args(extra)
    setup_env()
    xcb = args.platform == "xcb"
    requests = args.requests or (200 if xcb else 2_000 if args.quick else 10_000)
    rounds = args.rounds or (4 if xcb else 10 if args.quick else 20)
    warm_up = 1 if rounds <= 5 else 2
    with contextlib.ExitStack() as stack:
        if xcb:
            from benchmarks.xvfb import private_display, use_xcb

            use_xcb(stack.enter_context(private_display()))
        else:  # a person's 400 ms each would not fit 10,000 answers (see the docstring)
            import qoder_desktop.ui.dialogs.arming as arming

            arming.ARMING_DELAY_MS = 0
        from benchmarks.model_server import external_model
        from benchmarks.qt_support import hard_exit, run_qasync

        base_url = stack.enter_context(external_model())
        log(f"soak ({args.platform}): {requests} requests in {rounds} rounds")
        cli_every = args.cli_every if args.cli_every is not None else max(1, rounds // 5)
        soak = run_qasync(lambda: run(requests, rounds, warm_up, cli_every, args.platform,
                                      base_url))
        emit(figures(soak, args.platform), args.out)
        if args.checkpoints:
            Path(args.checkpoints).write_text(json.dumps({
                "warm_up": soak.warm_up, "answered": soak.answered, "errors": soak.errors,
                "tallies": soak.tallies, "cli_requests": soak.cli_requests,
                "checkpoints": [asdict(c) for c in soak.checkpoints]}), encoding="utf-8")
    hard_exit(0)


if __name__ == "__main__":
    main()
