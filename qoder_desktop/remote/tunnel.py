"""One SSH reverse tunnel per remote host, kept up while the app runs.

The tunnel is the system ``ssh`` (the person's own configuration: port, keys, agent,
``ProxyJump``, ``ControlMaster``) run as ``ssh -N -R <remote socket>:<local socket>``:
the remote socket, in the remote user's private folder ``~/.qoder-desktop`` (0700), leads
to this host's own socket on the desk (`serving`). ``ExitOnForwardFailure`` makes a
forward that cannot be set up end ``ssh`` at once; ``ServerAliveInterval`` and
``ServerAliveCountMax`` make a dead peer end it within seconds; ``BatchMode`` keeps it
from ever asking for a password or a host key on a terminal nobody sees.

`Tunnel` supervises that child: it resolves the remote folder once (one short ``ssh``
that also makes the folder), starts ``ssh``, says *connected* once ``ssh`` reports the
forward is set up (its ``-v`` line), and when ``ssh`` ends says *reconnecting* with the
reason taken from ``ssh``'s own error line and starts it again after a back-off capped
at `TunnelSettings.max_delay` seconds. The child is ended with the tunnel, and on Linux
the kernel ends it if the app dies (``PR_SET_PDEATHSIG``), so no ``ssh`` outlives us.

A broken tunnel never answers anything: the remote hook then finds no socket (or a
socket nobody answers behind) and exits 0 at once, so the CLI asks in its terminal.

Qt-free, stdlib only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import signal
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from qoder_desktop.remote.layout import REMOTE_FOLDER, SOCKET_NAME

log = logging.getLogger(__name__)

SSH = "ssh"
CONNECTED_MARKERS = ("forwarding_success: all expected forwarding replies received",
                     "remote forward success for: listen")
"""``ssh -v`` lines that say the reverse forward is set up."""
STOP_TIMEOUT = 3.0
"""Seconds ``ssh`` may take to leave after SIGTERM before it is killed."""


class TunnelState(StrEnum):
    """Where a host's tunnel is."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    STOPPED = "stopped"
    OWN_SESSION = "forwarded by your own SSH session"
    """The app keeps no tunnel: the person's own session carries ``RemoteForward``."""


@dataclass(frozen=True)
class TunnelStatus:
    """A host's tunnel state and, when it is down, why (from ``ssh``'s own words)."""

    host: str
    state: TunnelState
    reason: str = ""

    @property
    def line(self) -> str:
        """The state without the host: ``connected``, ``reconnecting — host
        unreachable`` (the tunnel line of a host's card and of ``remote status``)."""
        text = self.state.value
        return f"{text} — {self.reason}" if self.reason else text

    def describe(self) -> str:
        """One line for the main window and the tray: ``box: reconnecting — host
        unreachable``."""
        return f"{self.host}: {self.line}"


@dataclass(frozen=True)
class TunnelSettings:
    """How the tunnel notices a dead peer and how fast it tries again.

    Attributes:
        alive_interval: ``ServerAliveInterval`` (seconds between keep-alives).
        alive_count: ``ServerAliveCountMax`` (unanswered keep-alives before giving up).
        first_delay: the back-off before the first retry (doubled per failure).
        max_delay: the back-off's cap: the desk is back within about this long after
            the host is.
        connect_timeout: ``ConnectTimeout`` for one try.
    """

    alive_interval: int = 5
    alive_count: int = 3
    first_delay: float = 0.25
    max_delay: float = 2.0
    connect_timeout: int = 10


def ssh_prefix(ssh_config: Path | None = None, ssh: str = SSH) -> list[str]:
    """``ssh`` (with ``-F config`` when the host uses a configuration file of its own)."""
    return [ssh, "-F", str(ssh_config)] if ssh_config is not None else [ssh]


def remote_socket(remote_home: str) -> str:
    """The tunnel's socket on the remote host, for the remote user's HOME."""
    return f"{remote_home.rstrip('/')}/{REMOTE_FOLDER}/{SOCKET_NAME}"


def forward_command(destination: str, remote_path: str, local_path: Path, *,
                    ssh_config: Path | None = None,
                    settings: TunnelSettings | None = None, ssh: str = SSH) -> list[str]:
    """The ``ssh -N -R`` argv of one host's tunnel."""
    settings = settings or TunnelSettings()
    return [*ssh_prefix(ssh_config, ssh), "-N", "-v",
            "-o", "ExitOnForwardFailure=yes",
            "-o", f"ServerAliveInterval={settings.alive_interval}",
            "-o", f"ServerAliveCountMax={settings.alive_count}",
            "-o", f"ConnectTimeout={settings.connect_timeout}",
            "-o", "StreamLocalBindUnlink=yes",
            "-o", "BatchMode=yes",
            "-R", f"{remote_path}:{local_path}",
            "--", destination]


def remote_forward_line(remote_path: str, local_path: Path) -> str:
    """The ``RemoteForward`` line for a person's own SSH session to this host (their
    ``~/.ssh/config`` ``Host`` entry, or ``ssh -R`` by hand); a path with spaces is
    double-quoted, so ssh reads each path as one word."""
    return f"RemoteForward {_config_word(remote_path)} {_config_word(str(local_path))}"


def _config_word(text: str) -> str:
    """`text` as one word of an ssh_config line (double-quoted when it has spaces)."""
    return f'"{text}"' if any(ch.isspace() for ch in text) else text


_REASONS: tuple[tuple[str, str], ...] = (
    ("connection refused", "host unreachable (connection refused)"),
    ("connection timed out", "host unreachable (timed out)"),
    ("no route to host", "host unreachable (no route)"),
    ("network is unreachable", "host unreachable (no network)"),
    ("could not resolve hostname", "host name not found"),
    ("name or service not known", "host name not found"),
    ("host key verification failed", "host key not trusted (log in once with ssh)"),
    ("remote host identification has changed", "host key changed (check it with ssh)"),
    ("permission denied", "login refused (no key accepted)"),
    ("remote port forwarding failed",
     "the remote socket could not be made (run `qoder-desktop remote add` again)"),
    ("not responding", "connection lost (no keep-alive answer)"),
    ("broken pipe", "connection lost"),
    ("connection reset", "connection lost"),
    ("closed by remote host", "connection closed by the host"),
    ("connection closed", "connection closed by the host"),
)
_NOISE = ("authenticated to ", "transferred: ", "bytes per second", "openssh_",
          "warning: permanently added")
"""``ssh -v`` lines that are not errors (they say nothing about why it ended)."""


def explain(lines: Sequence[str], returncode: int | None = None) -> str:
    """A short reason a person understands, from ``ssh``'s error lines (newest last)."""
    for line in reversed(lines):
        lowered = line.lower()
        for needle, reason in _REASONS:
            if needle in lowered:
                return reason
    if lines:
        return lines[-1].strip()[:120]
    return "connection lost" if returncode == 255 or returncode is None else (
        f"ssh exited with status {returncode}")


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Ask the kernel to SIGTERM this (child) process when the app's thread ends."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)


_PR_SET_PDEATHSIG = 1
_PRCTL = None
if sys.platform.startswith("linux"):
    with contextlib.suppress(OSError, AttributeError):
        _PRCTL = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl


class Tunnel:
    """Keeps one host's ``ssh -N -R`` running while started; publishes its state.

    Args:
        host: the host's name as the person knows it (shown with the state).
        destination: the SSH destination (``user@box``, an alias from their config).
        local_path: this host's own socket on the desk (`serving`).
        on_status: called with every new `TunnelStatus` (on the loop's thread).
        ssh_config: an ``ssh_config`` file of its own (``-F``); None: the person's.
        settings: keep-alives and back-off.
        remote_path: the socket on the host when known (the deploy found the HOME);
            None: asked of the host (one short ``ssh``) before the first try.
    """

    def __init__(self, host: str, destination: str, local_path: Path, *,
                 on_status: Callable[[TunnelStatus], None] | None = None,
                 ssh_config: Path | None = None, settings: TunnelSettings | None = None,
                 remote_path: str | None = None, ssh: str = SSH) -> None:
        self.host = host
        self.destination = destination
        self.local_path = local_path
        self.settings = settings or TunnelSettings()
        self._on_status = on_status
        self._ssh_config = ssh_config
        self._ssh = ssh
        self.remote_path = remote_path
        """The remote socket, once the remote HOME is known."""
        self._deployed_path = remote_path is not None
        self.status = TunnelStatus(host, TunnelState.STOPPED)
        self.connects = 0
        """How many times the forward came up."""
        self._task: asyncio.Task[None] | None = None
        self._child: asyncio.subprocess.Process | None = None

    def __repr__(self) -> str:
        return f"Tunnel({self.host!r}, {self.status.state.value})"

    @property
    def pid(self) -> int | None:
        """The running ``ssh``'s process id, if one runs."""
        child = self._child
        return child.pid if child is not None and child.returncode is None else None

    def start(self) -> None:
        """Start supervising (returns at once; the state follows through `on_status`)."""
        if self._task is None or self._task.done():
            self._publish(TunnelState.CONNECTING)
            self._task = asyncio.get_running_loop().create_task(
                self._supervise(), name=f"ssh tunnel to {self.host}")

    async def stop(self) -> None:
        """End ``ssh`` and stop trying; idempotent."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._end_child()
        self._publish(TunnelState.STOPPED)

    def _publish(self, state: TunnelState, reason: str = "") -> None:
        status = TunnelStatus(self.host, state, reason)
        if status == self.status:
            return
        self.status = status
        log.info("remote tunnel %s", status.describe())
        if self._on_status is not None:
            try:
                self._on_status(status)
            except Exception:
                log.exception("remote tunnel: a status listener failed")

    async def _supervise(self) -> None:
        delay = self.settings.first_delay
        while True:
            try:
                reason, came_up = await self._run_once()
            except (OSError, ValueError) as exc:  # e.g. a stderr line past the limit
                log.warning("remote tunnel %s: %s", self.host, exc)
                reason, came_up = "ssh's output could not be read", False
            if came_up:
                delay = self.settings.first_delay
            self._publish(TunnelState.RECONNECTING, reason)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.settings.max_delay)

    async def _run_once(self) -> tuple[str, bool]:
        """One try: (why it ended, whether the forward was up)."""
        if self.remote_path is None:
            found, problem = await self._find_remote_home()
            if found is None:
                return problem, False
            self.remote_path = remote_socket(found)
        argv = forward_command(self.destination, self.remote_path, self.local_path,
                               ssh_config=self._ssh_config, settings=self.settings,
                               ssh=self._ssh)
        try:
            child = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE, preexec_fn=_die_with_parent)
        except OSError as exc:
            return f"ssh could not be started ({exc.strerror or exc})", False
        self._child = child
        errors: deque[str] = deque(maxlen=8)
        came_up = False
        assert child.stderr is not None
        try:
            while raw := await child.stderr.readline():
                line = raw.decode(errors="replace").rstrip()
                if any(marker in line for marker in CONNECTED_MARKERS):
                    came_up = True
                    self.connects += 1
                    self._publish(TunnelState.CONNECTED)
                elif line and not line.startswith("debug") and not line.lower().startswith(
                        _NOISE):
                    errors.append(line)
            await child.wait()
        finally:
            if child.returncode is None:
                await self._end_child()
            self._child = None
        reason = explain(list(errors), child.returncode)
        if "remote socket could not be made" in reason and not self._deployed_path:
            self.remote_path = None  # its folder may be gone: make it again next time
        return reason, came_up

    async def _find_remote_home(self) -> tuple[str | None, str]:
        """The remote HOME (making the private folder, 0700), or None and why not."""
        script = (f"umask 077 && mkdir -p \"$HOME/{REMOTE_FOLDER}\" && "
                  f"chmod 700 \"$HOME/{REMOTE_FOLDER}\" && cd && pwd")
        argv = [*ssh_prefix(self._ssh_config, self._ssh), "-o", "BatchMode=yes",
                "-o", f"ConnectTimeout={self.settings.connect_timeout}",
                "--", self.destination, script]
        try:
            child = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, preexec_fn=_die_with_parent)
        except OSError as exc:
            return None, f"ssh could not be started ({exc.strerror or exc})"
        self._child = child
        try:
            out, err = await child.communicate()
        finally:
            if child.returncode is None:
                await self._end_child()
            self._child = None
        home = out.decode(errors="replace").strip().splitlines()
        if child.returncode == 0 and home and home[-1].startswith("/"):
            return home[-1], ""
        lines = [line for line in err.decode(errors="replace").splitlines() if line.strip()]
        return None, explain(lines, child.returncode)

    async def _end_child(self) -> None:
        child = self._child
        if child is None or child.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            child.terminate()
        try:
            await asyncio.wait_for(child.wait(), STOP_TIMEOUT)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()
