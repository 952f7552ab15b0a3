"""A real OpenSSH server on loopback and a second local user standing in for a remote host.

`SshServer` runs Debian's ``/usr/sbin/sshd`` in the foreground on a free loopback port,
with its own host key, configuration and log; it can be stopped and started again on the
same port (a dropped tunnel, a rebooted server). `RemoteUser` is a fresh local account
(key-only login, its own HOME in a folder every user can reach) whose
``~/.ssh/authorized_keys`` holds the rig's client key. `SshHost` is what a test uses: a
client ``ssh_config`` with a ``Host`` alias (the non-default port, the ``IdentityFile``,
a ``UserKnownHostsFile`` of its own), so ``ssh -F <config> <alias> true`` works and the
person's own ``~/.ssh`` is never read or written.

Creating users and running ``sshd`` needs root: CI runs as root and so must run these
tests; elsewhere (not root, not CI) the fixtures skip with the reason. The fixtures are
plain pytest fixtures: a test folder's ``conftest.py`` takes them in with
``from helpers.sshd import remote_homes, ssh_host, ssh_server`` (and lists them in
``__all__``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers.remote_user import HOMES_PREFIX, RemoteUser, sweep_stale_users

SSHD = "/usr/sbin/sshd"
SSH = "ssh"
SSH_KEYGEN = "ssh-keygen"
HOST_ALIAS = "qd-remote"
"""The ``Host`` alias of the test user on the rig's server."""
CLOSED_ALIAS = "qd-closed"
"""A ``Host`` alias whose port has nothing listening (connection refused)."""
START_TIMEOUT = 10.0
RUN_TIMEOUT = 30.0


def skip_reason() -> str | None:
    """Why the rig cannot run here, or None. In CI it must run: no reason is given there
    (a missing sshd or root then fails the test loudly instead of skipping it)."""
    if os.environ.get("CI"):
        return None
    if os.geteuid() != 0:
        return "a real sshd and a second local user need root (CI runs these as root)"
    if not Path(SSHD).exists() or shutil.which(SSH) is None:
        return "OpenSSH is not installed (apt-get install openssh-server openssh-client)"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _keygen(path: Path, comment: str) -> None:
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, stdin=subprocess.DEVNULL)


@dataclass
class SshServer:
    """``sshd -D`` on ``127.0.0.1:port`` with a test host key, a client key and a log.

    Attributes:
        root: the server's private folder (keys, configuration, log), root's only.
        port: the loopback port it listens on (kept across `stop` / `start`).
        client_key: the private key the rig's users accept.
    """

    root: Path
    port: int = 0
    client_key: Path = field(init=False)
    host_key: Path = field(init=False)
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _log_offset: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        self.host_key = self.root / "ssh_host_ed25519_key"
        self.client_key = self.root / "client_ed25519"
        _keygen(self.host_key, "qoder-desktop test host")
        _keygen(self.client_key, "qoder-desktop test client")
        if not self.port:
            self.port = _free_port()

    @property
    def config(self) -> Path:
        """The server's ``sshd_config``."""
        return self.root / "sshd_config"

    @property
    def log(self) -> Path:
        """The server's log (``sshd -E``)."""
        return self.root / "sshd.log"

    def known_hosts_line(self) -> str:
        """The line a client's known_hosts needs to trust this server's host key."""
        key = (self.host_key.with_suffix(".pub")).read_text(encoding="ascii").split()
        return f"[127.0.0.1]:{self.port} {key[0]} {key[1]}\n"

    def _write_config(self) -> None:
        self.config.write_text("\n".join([
            f"ListenAddress 127.0.0.1:{self.port}",
            f"HostKey {self.host_key}",
            f"PidFile {self.root / 'sshd.pid'}",
            "AuthorizedKeysFile .ssh/authorized_keys",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "PermitRootLogin no",
            "StrictModes yes",
            "AllowStreamLocalForwarding yes",
            "StreamLocalBindUnlink yes",
            "AllowTcpForwarding remote",
            "X11Forwarding no",
            # A test user may get its own PATH (~/.ssh/environment), e.g. one without python3.
            "PermitUserEnvironment PATH",
            "MaxStartups 64:30:128",
            "MaxSessions 64",
            "ClientAliveInterval 0",
            "LogLevel VERBOSE",
            "",
        ]), encoding="utf-8")

    def start(self) -> None:
        """Start ``sshd`` (again, on the same port) and wait until it listens.

        Raises:
            RuntimeError: it did not start (its log says why).
        """
        if self._process is not None and self._process.poll() is None:
            return
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # the privilege-separation folder
        self._write_config()
        self._log_offset = self.log.stat().st_size if self.log.exists() else 0
        self._process = subprocess.Popen(
            [SSHD, "-D", "-f", str(self.config), "-E", str(self.log)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                error = self._process.stderr.read().decode(errors="replace") if (
                    self._process.stderr) else ""
                raise RuntimeError(f"sshd exited with {self._process.returncode}: {error}"
                                   f"{self.log_text()}")
            if "Server listening on" in self.log_text():
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"sshd did not listen within {START_TIMEOUT} s: {self.log_text()}")

    def stop(self) -> None:
        """Stop ``sshd`` and every session it runs (a dead server, as after a crash)."""
        process, self._process = self._process, None
        if process is None:
            return
        # Each connection's sshd is a child in a session of its own: end them too, or
        # a live tunnel would go on through the stopped server.
        for pid in [*_descendants(process.pid), process.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL if pid != process.pid else signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()

    @property
    def running(self) -> bool:
        """The server process is alive."""
        return self._process is not None and self._process.poll() is None

    def log_text(self) -> str:
        """The server's log since its last start."""
        try:
            with self.log.open("rb") as stream:
                stream.seek(self._log_offset)
                return stream.read().decode(errors="replace")
        except FileNotFoundError:
            return ""


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (from /proc), deepest last."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError), open(
                    f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                parents[int(entry)] = int(stat.read().rsplit(") ", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found.extend(children)
        frontier = children
    return found


@dataclass
class SshHost:
    """A remote host as a test (and the app) reaches it: ``ssh -F config alias``.

    Attributes:
        server: the running ``sshd``.
        user: the account on it.
        config: the client ``ssh_config`` (aliases `alias` and `closed_alias`).
        known_hosts: the client's own known_hosts file.
        alias: the ``Host`` alias of `user` on `server`.
        closed_alias: an alias whose port refuses connections.
    """

    server: SshServer
    user: RemoteUser
    config: Path
    known_hosts: Path
    alias: str = HOST_ALIAS
    closed_alias: str = CLOSED_ALIAS

    @property
    def prefix(self) -> list[str]:
        """The ssh command up to the destination: ``["ssh", "-F", config]``."""
        return [SSH, "-F", str(self.config)]

    def ssh(self, *command: str) -> list[str]:
        """The full argv that runs `command` on the host."""
        return [*self.prefix, self.alias, *command]

    def run(self, command: str, *, input: str | None = None,
            timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Run a shell command on the host (as its user) and return what it did."""
        return subprocess.run(self.ssh(command), input=input, capture_output=True, text=True,
                              timeout=timeout, check=False)

    @classmethod
    def write_config(cls, folder: Path, server: SshServer, user: RemoteUser) -> SshHost:
        """The client files in `folder`: config, known_hosts (trusting the server)."""
        known_hosts = folder / "known_hosts"
        known_hosts.write_text(server.known_hosts_line(), encoding="ascii")
        config = folder / "ssh_config"
        common = [
            f"  IdentityFile {server.client_key}",
            "  IdentitiesOnly yes",
            "  IdentityAgent none",
            f"  UserKnownHostsFile {known_hosts}",
            "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes",
            "  ConnectTimeout 5",
            "  LogLevel ERROR",
        ]
        config.write_text("\n".join([
            f"Host {HOST_ALIAS}",
            "  HostName 127.0.0.1",
            f"  Port {server.port}",
            f"  User {user.name}",
            *common,
            f"Host {CLOSED_ALIAS}",
            "  HostName 127.0.0.1",
            f"  Port {_free_port()}",
            f"  User {user.name}",
            *common,
            "",
        ]), encoding="utf-8")
        os.chmod(config, 0o600)
        return cls(server, user, config, known_hosts)


def _require_rig() -> None:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    """One ``sshd`` on a loopback port for the test run (per xdist worker)."""
    _require_rig()
    server = SshServer(tmp_path_factory.mktemp("sshd"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def remote_homes() -> Iterator[Path]:
    """The folder of the test users' HOMEs: outside pytest's root-only temp folders, so
    the users can reach their own HOME. It is named for this process, so a later run can
    sweep what a killed run left (`sweep_stale_users`)."""
    _require_rig()
    sweep_stale_users(Path(tempfile.gettempdir()))
    base = Path(tempfile.mkdtemp(prefix=f"{HOMES_PREFIX}{os.getpid()}-"))
    os.chmod(base, 0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def ssh_host(ssh_server: SshServer, remote_homes: Path, tmp_path: Path) -> Iterator[SshHost]:
    """A fresh remote account on the running ``sshd`` and a client config that reaches it.

    The server is started again if a test stopped it.
    """
    ssh_server.start()
    public_key = ssh_server.client_key.with_suffix(".pub").read_text(encoding="ascii")
    user = RemoteUser.create(remote_homes, public_key)
    folder = tmp_path / "ssh-client"
    folder.mkdir()
    try:
        yield SshHost.write_config(folder, ssh_server, user)
    finally:
        user.delete()

