"""Companion overhead: 200 rule-allowed tool calls through the full app vs a bare callback.

The real Claude Code CLI plays ``touch_200`` (200 × ``Bash(touch f.txt)``, each of which
the CLI asks about) against the scripted model (own process, loopback). Variants, run in
one process on one qasync loop, interleaved A B B A …:

* app: `DesktopApp` wiring, `SessionHub`/`ClaudeSession` (hooks, transcript, ledger), the
  session rule ``Bash(touch f.txt)`` granted in our rule store only, so every call goes
  can_use_tool → broker → rule → allow;
* bare: a plain `ClaudeSDKClient` whose can_use_tool returns `PermissionResultAllow()`;
* hooks (attribution only): bare plus the three no-op hooks the app registers, to show
  what the CLI's hook round trips cost by themselves.

Timed: the prompt sent → the turn's result (CLI start-up is not timed). Per call: the
interval between consecutive permission callbacks, and the callback's own duration.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from benchmarks.common import (
    Figure,
    cpu_seconds,
    emit,
    judge,
    log,
    now,
    parse_args,
    profile_to_stderr,
    setup_env,
)

RATIO_TARGET = 1.05
SCENARIO = "touch_200"
CALLS = 200


class Run:
    """One timed turn: wall time, callback start times and durations."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.calls: list[float] = []
        self.durations: list[float] = []
        self.parts: dict[str, float] = {}
        self.cpu_self = 0.0
        self.cpu_cli = 0.0

    def intervals_ms(self) -> list[float]:
        """Time between consecutive permission callbacks (ms)."""
        return [(b - a) * 1e3 for a, b in zip(self.calls, self.calls[1:], strict=False)]


def timed_callback(run_of: Callable[[], Run], callback: Any) -> Any:
    """Wrap a can_use_tool callback to record when it ran and for how long."""

    async def wrapper(tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        run = run_of()
        start = now()
        run.calls.append(start)
        try:
            return await callback(tool_name, tool_input, context)
        finally:
            run.durations.append((now() - start) * 1e3)

    return wrapper


def _timed_hook(hook: Any, parts: Any, label: str) -> Any:
    """Wrap an async hook so its run time adds to `parts[label]`."""

    async def wrapper(*args: Any) -> Any:
        start = now()
        try:
            return await hook(*args)
        finally:
            parts.add(label, (now() - start) * 1e3)

    return wrapper


def cli_pid(client: Any) -> int | None:
    """The CLI's process id (private SDK attributes; None when not reachable)."""
    process = getattr(getattr(client, "_transport", None), "_process", None)
    return getattr(process, "pid", None)


class AppVariant:
    """The full app path: one `DesktopApp`, a new session per run."""

    name = "app"

    def __init__(self, base_url: str, root: Path) -> None:
        from benchmarks.qt_support import Breakdown, build_desktop

        self.root = root
        self.run = Run()
        self.parts = Breakdown()
        parts = self.parts

        def wrap(launcher: Any) -> Any:
            def factory(*args: Any) -> Any:
                session = launcher(*args)
                session.can_use_tool = timed_callback(lambda: self.run, session.can_use_tool)
                for hook in ("pre_tool_use", "post_tool_use"):
                    setattr(session, hook, _timed_hook(getattr(session, hook), parts, hook))
                return session
            return factory

        self.desktop = build_desktop(base_url, wrap_factory=wrap)
        ledger, window = self.desktop.ledger, self.desktop.app.window
        for name in ("record_request", "record_decision", "record_tool_event"):
            parts.wrap(ledger, name, "ledger writes")
        parts.wrap(self.desktop.db, "active_rules", "rule store read")
        parts.wrap(window, "append_transcript", "transcript view")
        parts.wrap(window, "update_session", "session list")
        self.count = 0

    async def once(self, scenario: str = SCENARIO) -> Run:
        """Start a session, grant the rule, send the prompt, wait for the result."""
        from qoder_desktop.agents.hub import HubEvent
        from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
        from qoder_desktop.domain.session_options import SessionOptions, TranscriptKind

        self.count += 1
        self.run = Run()
        workspace = self.root / f"app-{self.count}"
        workspace.mkdir()
        hub = self.desktop.hub
        info = await hub.start_session(SessionOptions(
            cwd=str(workspace), scenario=scenario, name=f"bench {self.count}"))
        self.desktop.db.add_rules([SessionRule(
            session_id=info.session_id, behavior=RuleBehavior.ALLOW,
            rule=RuleValue.parse("Bash(touch f.txt)"), granted_by="user")])
        hub.rules_changed(info.session_id)
        done = asyncio.get_running_loop().create_future()

        def on_hub(event: HubEvent) -> None:
            line = event.line
            if (line is not None and line.session_id == info.session_id and not done.done()
                    and line.kind in (TranscriptKind.RESULT, TranscriptKind.ERROR)):
                done.set_result(line)

        unsubscribe = hub.subscribe(on_hub)
        self.parts.next_sample(keep=False)
        pid = cli_pid(getattr(hub._sessions[info.session_id], "_client", None))
        cpu_self, cpu_cli = cpu_seconds(), cpu_seconds(pid)
        start = now()
        await hub.send(info.session_id, "Go ahead.")
        result = await asyncio.wait_for(done, 300)
        self.run.wall = now() - start
        self.run.cpu_self = cpu_seconds() - cpu_self
        self.run.cpu_cli = cpu_seconds(pid) - cpu_cli
        self.run.parts = dict(self.parts.current)
        unsubscribe()
        await hub.stop(info.session_id)
        if result.kind is TranscriptKind.ERROR:
            raise RuntimeError(f"app run failed: {result.text}")
        return self.run

    async def close(self) -> None:
        """Stop every session and close the views."""
        await self.desktop.hub.stop_all()
        self.desktop.close()


class BareVariant:
    """A bare `ClaudeSDKClient` with an immediate allow (optionally with no-op hooks)."""

    def __init__(self, base_url: str, root: Path, *, hooks: bool) -> None:
        self.base_url = base_url
        self.root = root
        self.hooks = hooks
        self.name = "hooks" if hooks else "bare"
        self.config = root / f"{self.name}-config"
        self.count = 0

    async def once(self, scenario: str = SCENARIO) -> Run:
        """Connect, send the prompt, read until the result, disconnect."""
        from claude_agent_sdk import (
            ClaudeAgentOptions,
            ClaudeSDKClient,
            HookMatcher,
            PermissionResultAllow,
        )

        from qoder_desktop.scripted_model.cli_env import build_cli_env

        self.count += 1
        run = Run()
        workspace = self.root / f"{self.name}-{self.count}"
        workspace.mkdir()

        async def allow(tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
            return PermissionResultAllow()

        async def noop(hook_input: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
            return {}

        hooks: dict[Any, list[Any]] | None = None
        if self.hooks:
            hooks = {event: [HookMatcher(matcher=None, hooks=[cast(Any, noop)])]
                     for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure")}
        options = ClaudeAgentOptions(
            cwd=str(workspace), env=build_cli_env(self.base_url, self.config, scenario=scenario),
            setting_sources=[], permission_mode="default",
            can_use_tool=timed_callback(lambda: run, allow), hooks=hooks)
        client = ClaudeSDKClient(options=options)
        await client.connect()
        try:
            pid = cli_pid(client)
            cpu_self, cpu_cli = cpu_seconds(), cpu_seconds(pid)
            start = now()
            await client.query("Go ahead.")
            async for message in client.receive_response():
                if type(message).__name__ == "ResultMessage":
                    if getattr(message, "is_error", False):
                        raise RuntimeError(f"bare run failed: {getattr(message, 'result', '')}")
                    break
            run.wall = now() - start
            run.cpu_self = cpu_seconds() - cpu_self
            run.cpu_cli = cpu_seconds(pid) - cpu_cli
        finally:
            await client.disconnect()
        return run

    async def close(self) -> None:
        """Nothing to close."""


async def run(base_url: str, rounds: int, with_hooks: bool, profile: bool) -> list[Figure]:
    """Warm up, then interleave the variants; returns the table rows."""
    root = Path(tempfile.mkdtemp(prefix="qoder-bench-overhead-"))
    app = AppVariant(base_url, root)
    bare = BareVariant(base_url, root, hooks=False)
    variants: list[Any] = [app, bare]
    if with_hooks:
        variants.append(BareVariant(base_url, root, hooks=True))
    results: dict[str, list[Run]] = {v.name: [] for v in variants}
    for variant in variants:  # warm-up: CLI start-up, disk caches, first imports
        warm = await variant.once("idle")
        log(f"warm-up {variant.name}: {warm.wall:.2f} s")
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    for round_no in range(rounds):
        order = variants if round_no % 2 == 0 else list(reversed(variants))
        for variant in order:
            if profiler is not None and variant is app:
                profiler.enable()
            result = await variant.once()
            if profiler is not None:
                profiler.disable()
            if len(result.calls) != CALLS:
                raise RuntimeError(f"{variant.name}: {len(result.calls)} callbacks, "
                                   f"expected {CALLS}")
            results[variant.name].append(result)
            log(f"round {round_no + 1} {variant.name}: {result.wall:.2f} s")
    for variant in variants:
        await variant.close()
    if profiler is not None:
        profile_to_stderr(profiler, 30)
    return figures(results)


def figures(results: dict[str, list[Run]]) -> list[Figure]:
    """Ratio rows (wall medians, with the pairwise range), per-call medians, attribution."""
    walls = {name: [r.wall for r in runs] for name, runs in results.items()}
    med = {name: statistics.median(values) for name, values in walls.items()}

    def per_call(name: str) -> tuple[float, float]:
        intervals = [i for r in results[name] for i in r.intervals_ms()]
        durations = [d for r in results[name] for d in r.durations]
        return statistics.median(intervals), statistics.median(durations)

    def cpu(name: str) -> tuple[float, float]:
        return (statistics.median(r.cpu_self for r in results[name]),
                statistics.median(r.cpu_cli for r in results[name]))

    def row(title: str, base: str, extra: list[str]) -> Figure:
        ratio = med["app"] / med[base]
        pairs = [a / b for a, b in zip(walls["app"], walls[base], strict=True)]
        interval_ratio = per_call("app")[0] / per_call(base)[0]
        cpu_ratio = sum(cpu("app")) / sum(cpu(base))
        notes = [f"pairwise ratios (same round): {', '.join(f'{r:.3f}' for r in pairs)}; "
                 f"per-call interval median ratio {interval_ratio:.3f}; CPU (this process + "
                 f"CLI) ratio {cpu_ratio:.3f}", *extra]
        return Figure(title, "x", {"value": ratio, "low": min(pairs), "high": max(pairs)},
                      f"≤ {RATIO_TARGET:g}", judge(ratio, RATIO_TARGET), notes)

    notes = []
    for name in results:
        interval, duration = per_call(name)
        cpu_self, cpu_cli = cpu(name)
        notes.append(f"{name}: wall med {med[name]:.2f} s "
                     f"({', '.join(f'{w:.2f}' for w in walls[name])}); per call: interval med "
                     f"{interval:.1f} ms, callback med {duration:.2f} ms; CPU med: this "
                     f"process {cpu_self:.2f} s, CLI {cpu_cli:.2f} s")
    labels = sorted({label for r in results["app"] for label in r.parts})
    spent = {label: statistics.median(r.parts.get(label, 0.0) for r in results["app"]) / CALLS
             for label in labels}
    notes.append("app, GUI-thread ms per call (harness wrappers; ledger writes happen inside "
                 "the callback and the hooks): " + ", ".join(
                     f"{label} {ms:.2f}" for label, ms in sorted(spent.items(),
                                                                key=lambda i: -i[1])))
    critical = per_call("app")[1] + spent.get("pre_tool_use", 0.0) + spent.get(
        "post_tool_use", 0.0)
    notes.append(f"critical path: the CLI waits {critical:.2f} ms per call for our callback "
                 f"and hooks → {critical * CALLS / 1000:.2f} s per turn, "
                 f"{critical * CALLS / 1000 / med['bare'] * 100:.1f}% of the bare wall time")
    rows = [row(f"companion overhead ({CALLS} rule-allowed calls, app / bare)", "bare", notes)]
    if "hooks" in walls:
        rows.append(row("companion overhead, like for like (app / bare + no-op hooks)",
                        "hooks", [
            f"(bare + no-op hooks) / bare = {med['hooks'] / med['bare']:.3f}: the CLI's own "
            "speed with hooks registered; this row isolates our side"]))
    return rows


def main() -> None:
    """Entry point (python -m benchmarks.bench_overhead)."""
    args = parse_args(lambda p: p.add_argument("--no-hooks-variant", action="store_true"))
    setup_env()
    from benchmarks.model_server import external_model
    from benchmarks.qt_support import hard_exit, run_qasync

    rounds = 1 if args.quick else 3
    with external_model() as base_url:
        rows = run_qasync(lambda: run(base_url, rounds, not args.no_hooks_variant,
                                      args.profile))
    emit(rows, args.out)
    hard_exit(0)


if __name__ == "__main__":
    main()
