"""How one remote host stands, as values: what ``remote status`` prints and what the
settings page shows are both read from a `HostCheck`.

A check is one probe and one ``status`` run of the host script over the person's own
``ssh`` (see `deploy`); the tunnel's state comes from `tunnel_state`. Qt-free, and slow
(it waits on ``ssh``): run it off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qoder_desktop.remote.deploy import HostProbe, probe, run_on_host
from qoder_desktop.remote.hook_file import hook_version
from qoder_desktop.remote.hosts import RemoteError, RemoteHost
from qoder_desktop.remote.ssh import Unreachable
from qoder_desktop.remote.tunnel import remote_forward_line
from qoder_desktop.remote.tunnel_state import NOT_RUNNING, describe_tunnel, host_socket_path
from qoder_desktop.terminal.install import Agent

__all__ = ["HostCheck", "check_host", "forward_in_use", "forward_line", "host_socket_path",
           "remembered_hook"]


def forward_line(host: RemoteHost) -> str:
    """The ``RemoteForward`` line for people who keep their own SSH session to `host`
    (in its ``Host`` entry of ``~/.ssh/config``), instead of the app's tunnel."""
    return remote_forward_line(host.remote_socket, host_socket_path(host.name))


def forward_in_use(tunnel: str) -> str:
    """Which way in is active, from the tunnel's state line: the app's tunnel, the
    person's own session, or neither yet."""
    if tunnel.startswith("connected"):
        return "In use: the app's tunnel (you need not paste this line)."
    if "own SSH session" in tunnel:
        return "In use: your own SSH session (this line)."
    if tunnel == NOT_RUNNING:
        return ("In use: neither yet. The app keeps a tunnel while it runs; or paste this "
                "line into the Host entry of your own SSH session.")
    return ("In use: the app's tunnel, when it is up; or paste this line into the Host "
            "entry of your own SSH session.")


def remembered_hook(host: RemoteHost) -> str:
    """What the last add installed on `host`, for people (before a check says more)."""
    agents = ", ".join(Agent(name).label if name in set(Agent) else name
                       for name in host.agents) or "no agent"
    added = f", added {host.added[:10]}" if host.added else ""
    return f"version {host.hook_version} for {agents}{added}"


@dataclass(frozen=True)
class HostCheck:
    """One host as a check found it.

    Attributes:
        host: the host as this desk knows it.
        reachable: ssh reached and logged in to it.
        problem: why it is not reachable, or what is wrong on it once reached ("" when
            nothing is).
        found: what the probe found (None when it could not run).
        answer: what the host script's ``status`` said (None when it could not run).
        tunnel: the tunnel's state (`tunnel_state.describe_tunnel`).
    """

    host: RemoteHost
    reachable: bool
    problem: str = ""
    found: HostProbe | None = None
    answer: dict[str, Any] | None = None
    tunnel: str = NOT_RUNNING

    @property
    def ok(self) -> bool:
        """Reachable, nothing wrong, and the hook of this app's version installed."""
        return self.reachable and not self.problem and self.hook_installed

    @property
    def in_use(self) -> str:
        """Which way in is active, from the tunnel's state (`forward_in_use`)."""
        return forward_in_use(self.tunnel)

    @property
    def python(self) -> str:
        """The host's python3 and its version (``3.11.2 (/usr/bin/python3)``), or ""."""
        if self.found is None or not self.found.python:
            return ""
        version = ".".join(map(str, self.found.python_version)) or "version unknown"
        return f"{version} ({self.found.python})"

    @property
    def agents_found(self) -> str:
        """Which agent CLIs are on the host's PATH, for people."""
        if self.found is None:
            return ""
        words = []
        for agent in Agent:
            cli = self.found.agent_cli(agent)
            words.append(f"{agent.label} ({cli})" if cli else f"{agent.label}: not found")
        return "; ".join(words)

    @property
    def hook_version(self) -> str | None:
        """The version of the hook on the host (None: not there, or not known)."""
        return None if self.answer is None else self.answer.get("hook")

    @property
    def hook_installed(self) -> bool:
        """This app's hook is on the host with its token, and in some agent's settings."""
        if self.answer is None or self.hook_version != hook_version():
            return False
        return bool(self.answer.get("token")) and bool(self.installed_agents)

    @property
    def installed_agents(self) -> list[str]:
        """The agents (labels) whose settings on the host hold our current entry."""
        if self.answer is None:
            return []
        return [Agent(name).label for name, entry in self.answer.get("agents", {}).items()
                if entry.get("installed") and entry.get("current")]

    @property
    def hook(self) -> str:
        """One line on the hook for people: installed and its version, or what to do."""
        if self.answer is None:
            return ""
        deployed, current = self.hook_version, hook_version()
        if not deployed:
            return f"not installed ({self.answer['folder']}); add the host again"
        if deployed != current:
            return f"version {deployed}; this app has {current}: add the host again to update"
        if not self.answer.get("token"):
            return "installed, but its token is missing on the host: add the host again"
        agents = self.installed_agents
        if not agents:
            return f"version {deployed}, but in no agent's settings: add the host again"
        return f"installed, version {deployed} ({', '.join(agents)})"


def check_host(host: RemoteHost) -> HostCheck:
    """Check `host` over ssh: reachable, python3, the agents, the hook and our entries,
    and the tunnel's state. Never raises for the host's sake: a failure is the check's
    `problem`."""
    tunnel = describe_tunnel(host)
    try:
        found = probe(host.name, host.ssh_config)
    except Unreachable as exc:
        return HostCheck(host, False, str(exc), tunnel=tunnel)
    except RemoteError as exc:
        return HostCheck(host, True, str(exc), tunnel=tunnel)
    problem = found.python_problem(host.name)
    if problem:
        return HostCheck(host, True, problem, found, tunnel=tunnel)
    try:
        answer = run_on_host(host.name, found, "status", ssh_config=host.ssh_config)
    except Unreachable as exc:
        return HostCheck(host, False, str(exc), found, tunnel=tunnel)
    except RemoteError as exc:
        return HostCheck(host, True, str(exc), found, tunnel=tunnel)
    return HostCheck(host, True, "", found, answer, tunnel)
