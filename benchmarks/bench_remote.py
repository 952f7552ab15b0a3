"""Remote hosts: the hook on a host reaching the desk over the app's ``ssh -N -R`` tunnel.

A real OpenSSH server on a loopback port and fresh local users standing in for remote
hosts (the tests' rig, `tests/helpers/sshd.py`; it needs root and Debian's
``openssh-server``), each with the standalone hook `remote add` deploys and its token in
its private folder; the desk side (`remote.serving.RemoteHooks`: each host's socket, hook
server and tunnel) with the broker and hub on this process's loop. Figures:

- hook start → request at the desk, over the tunnel, against the same hook file run on
  the desk and connecting to the same host's socket directly (both started with
  ``runuser`` as their user, interleaved): the ratio is what the tunnel costs;
- tunnel down (``ssh`` killed) → the host's hook exits, printing nothing (the CLI asks in
  its terminal);
- ``sshd`` back → tunnel connected again (the server was down long enough for the
  back-off to reach its cap);
- 10 hosts at once: a request from each, started together, every round: start → at the
  desk (all of them), and every request shown as the host whose socket it came in on;
- the desk's idle CPU with 10 tunnels up against none (keep-alives are ``ssh``'s work).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import (
    REPO_ROOT,
    Figure,
    cpu_seconds,
    emit,
    judge,
    log,
    now,
    parse_args,
    setup_env,
    summarize,
)

sys.path.insert(0, str(REPO_ROOT / "tests"))  # the tests' sshd rig

EVENT = {"hook_event_name": "PermissionRequest", "session_id": "bench-remote", "cwd": "/srv",
         "permission_mode": "default", "tool_name": "Bash",
         "tool_input": {"command": "make test"}, "permission_suggestions": []}
HOSTS = 10
PYTHON3 = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "python3"
"""The system's python3 for every hook run (root's PATH may hold a slower shim)."""
WAIT = 60.0


@dataclass
class Host:
    """One remote user on the rig's server, with the hook and its token deployed."""

    name: str
    ssh: object  # helpers.sshd.SshHost
    token: str
    hook: str


def _deploy(name: str, ssh_host: object, token: str) -> Host:
    from qoder_desktop.remote.hook_file import hook_source
    from qoder_desktop.remote.layout import HOOK_NAME, REMOTE_FOLDER, TOKEN_NAME

    user = ssh_host.user  # type: ignore[attr-defined]
    hook = user.write(f"{REMOTE_FOLDER}/{HOOK_NAME}", hook_source(), mode=0o700)
    user.write(f"{REMOTE_FOLDER}/{TOKEN_NAME}", token + "\n")
    os.chmod(user.home / REMOTE_FOLDER, 0o700)
    return Host(name, ssh_host, token, str(hook))


async def _run_hook(user: str, hook: str, session: str) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        "runuser", "-u", user, "--", PYTHON3, hook, "hook", "permission-request",
        "--agent", "claude", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL)
    assert process.stdin is not None
    process.stdin.write(json.dumps({**EVENT, "session_id": session}).encode())
    process.stdin.close()
    return process


async def measure(samples: int, root: Path) -> list[Figure]:
    """Run every figure; `samples` per timed figure."""
    from helpers.sshd import RemoteUser, SshHost, SshServer

    from qoder_desktop.agents.hub import SessionHub
    from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
    from qoder_desktop.domain.models import ApprovalRequest, Decision
    from qoder_desktop.remote.hook_file import hook_source
    from qoder_desktop.remote.layout import HOOK_NAME, SOCKET_NAME, TOKEN_NAME
    from qoder_desktop.remote.serving import RemoteEndpoint, RemoteHooks
    from qoder_desktop.remote.tunnel import (
        TunnelSettings,
        TunnelState,
        TunnelStatus,
        remote_socket,
    )
    from qoder_desktop.remote.tunnel_state import host_socket_path
    from qoder_desktop.store.database import Database
    from qoder_desktop.store.ledger import Ledger

    server = SshServer(root / "sshd")
    server.start()
    homes = Path(tempfile.mkdtemp(prefix="qd-bench-homes-"))
    os.chmod(homes, 0o755)
    public_key = server.client_key.with_suffix(".pub").read_text(encoding="ascii")
    users: list[RemoteUser] = []
    db = Database.open(root / "bench.sqlite3")
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    hub = SessionHub(db, ledger, broker, lambda *a: None)  # type: ignore[arg-type,return-value]
    added: asyncio.Queue[tuple[float, ApprovalRequest]] = asyncio.Queue()

    def on_event(event: BrokerEvent, request: ApprovalRequest, _d: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            added.put_nowait((now(), request))

    broker.subscribe(on_event)
    changed = asyncio.Event()

    def on_status(_status: TunnelStatus) -> None:
        changed.set()

    remote = RemoteHooks(broker, hub, on_status=on_status)
    figures: list[Figure] = []
    try:
        hosts = []
        for index in range(HOSTS):
            user = RemoteUser.create(homes, public_key)
            users.append(user)
            folder = root / f"client-{index}"
            folder.mkdir()
            ssh_host = SshHost.write_config(folder, server, user)
            hosts.append(_deploy(f"box{index}", ssh_host, os.urandom(24).hex()))

        def endpoint(host: Host) -> RemoteEndpoint:
            ssh_host = host.ssh
            return RemoteEndpoint(
                host.name, ssh_host.alias, host.token,  # type: ignore[attr-defined]
                ssh_config=ssh_host.config,  # type: ignore[attr-defined]
                remote_path=remote_socket(str(ssh_host.user.home)))  # type: ignore[attr-defined]

        async def until(condition: object) -> None:
            async with asyncio.timeout(WAIT):
                while not condition():  # type: ignore[operator]
                    changed.clear()
                    await changed.wait()

        idle_none = await _idle_cpu(3.0)
        first = hosts[0]
        await remote.start([endpoint(first)])
        tunnel = remote.tunnels[first.name]
        await until(lambda: tunnel.status.state is TunnelState.CONNECTED)

        def on_the_desk(host: Host) -> str:
            """The same hook file on the desk, reaching the host's socket directly."""
            local = root / f"local-{host.name}"
            local.mkdir(mode=0o700)
            (local / HOOK_NAME).write_text(hook_source(), encoding="utf-8")
            (local / TOKEN_NAME).write_text(host.token + "\n", encoding="utf-8")
            (local / SOCKET_NAME).symlink_to(host_socket_path(host.name))
            return str(local / HOOK_NAME)

        direct_hooks = {host.name: on_the_desk(host) for host in hosts}
        remote_user = first.ssh.user.name  # type: ignore[attr-defined]
        over_tunnel, direct = [], []
        for sample in range(samples):
            for way, user_name, hook, values in (
                    ("tunnel", remote_user, first.hook, over_tunnel),
                    ("direct", "root", direct_hooks[first.name], direct)):
                start = now()
                process = await _run_hook(user_name, hook, f"{way}-{sample}")
                at, request = await asyncio.wait_for(added.get(), WAIT)
                values.append((at - start) * 1000)
                assert request.host == first.name
                broker.answer(request.request_id, Decision.deny("benchmark"))
                out = await process.stdout.read() if process.stdout else b""
                await process.wait()
                assert b'"deny"' in out, out
        figures.append(Figure(
            "remote hook start → request at the desk (over the ssh tunnel)", "ms",
            summarize(over_tunnel), "ratio ≤ 1.3x", "", floor=summarize(direct),
            floor_label="same hook file on the desk, its socket directly"))
        ratio = figures[-1].ratio() or 0.0
        figures[-1].verdict = judge(ratio, 1.3)

        # Tunnel killed: the host's hook steps aside (the tunnel waits before it tries
        # again, so the hook surely finds it down).
        fall_through = []
        quick_retry = tunnel.settings
        for sample in range(samples):
            tunnel.settings = TunnelSettings(first_delay=WAIT, max_delay=WAIT)
            await tunnel.stop()
            tunnel.start()
            await until(lambda: tunnel.status.state is TunnelState.CONNECTED)
            pid = tunnel.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            await until(lambda: tunnel.status.state is TunnelState.RECONNECTING)
            start = now()
            process = await _run_hook(remote_user, first.hook, f"down-{sample}")
            out = await process.stdout.read() if process.stdout else b""
            await process.wait()
            fall_through.append((now() - start) * 1000)
            assert out == b"", out
            assert added.empty()
            tunnel.settings = quick_retry
            await tunnel.stop()
            tunnel.start()
        figures.append(Figure("tunnel killed → remote hook exits, printing nothing", "ms",
                              summarize(fall_through), "p95 ≤ 1000 ms",
                              judge(summarize(fall_through)["p95"], 1000.0), judged="p95"))

        # sshd restarted: the tunnel comes back by itself.
        reconnect = []
        for _ in range(max(2, samples // 4)):
            await until(lambda: tunnel.status.state is TunnelState.CONNECTED)
            server.stop()
            await until(lambda: "unreachable" in tunnel.status.reason)
            await asyncio.sleep(tunnel.settings.max_delay * 2)  # the back-off at its cap
            server.start()
            start = now()
            await until(lambda: tunnel.status.state is TunnelState.CONNECTED)
            reconnect.append((now() - start) * 1000)
        figures.append(Figure("sshd back → tunnel connected again", "ms", summarize(reconnect),
                              "max ≤ 5000 ms", judge(max(reconnect), 5000.0), judged="max"))

        # Ten hosts at once.
        for host in hosts[1:]:
            await remote.add(endpoint(host))
        await until(lambda: all(t.status.state is TunnelState.CONNECTED
                                for t in remote.tunnels.values()))
        idle_ten = await _idle_cpu(3.0)
        together: dict[str, list[float]] = {"tunnel": [], "direct": []}
        wrong = 0
        for round_ in range(max(2, samples // 2)):
            for way in together:
                start = now()
                processes = [await _run_hook(
                    h.ssh.user.name if way == "tunnel" else "root",  # type: ignore[attr-defined]
                    h.hook if way == "tunnel" else direct_hooks[h.name],
                    f"{way}-{round_}-{h.name}") for h in hosts]
                for _ in hosts:
                    at, request = await asyncio.wait_for(added.get(), WAIT)
                    together[way].append((at - start) * 1000)
                    wrong += request.session_id != f"{way}-{round_}-{request.host}"
                    broker.answer(request.request_id, Decision.deny("benchmark"))
                for process in processes:
                    await process.communicate()
        many = Figure(
            f"{HOSTS} hosts at once: remote hook start → at the desk (all rounds)", "ms",
            summarize(together["tunnel"]), "ratio ≤ 1.3x, every request its own host's",
            floor=summarize(together["direct"]),
            floor_label=f"the same {HOSTS} hooks on the desk, sockets directly",
            notes=[f"{wrong} requests shown as another host than their socket's (of "
                   f"{2 * len(together['tunnel'])})"])
        many.verdict = judge(many.ratio() or 0.0, 1.3) if not wrong else "MISS"
        figures.append(many)
        figures.append(Figure(
            "desk idle CPU, 10 tunnels up (3 s)", "ms", {"value": idle_ten * 1000},
            "no growth", "INFO", floor={"value": idle_none * 1000},
            floor_label="no tunnel, same 3 s"))
    finally:
        await remote.stop()
        db.close()
        server.stop()
        for user in users:
            user.delete()
        shutil.rmtree(homes, ignore_errors=True)
    return figures


async def _idle_cpu(seconds: float) -> float:
    """This process's CPU seconds over `seconds` of idling on the loop."""
    before = cpu_seconds()
    await asyncio.sleep(seconds)
    return cpu_seconds() - before


def main() -> int:
    """Run the benchmark and print or write its figures."""
    args = parse_args()
    root = setup_env()
    from helpers.sshd import skip_reason

    os.environ.pop("CI", None)  # the rig's reason to fail instead of skipping
    reason = skip_reason()
    if reason is not None:
        log(f"remote: skipped ({reason})")
        emit([Figure("remote hosts: skipped", "ms", {}, notes=[reason])], args.out)
        return 0
    samples = 5 if args.quick else 20
    log(f"remote hosts: {samples} samples, {HOSTS} hosts")
    started = time.monotonic()
    emit(asyncio.run(measure(samples, root)), args.out)
    log(f"remote hosts: {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
