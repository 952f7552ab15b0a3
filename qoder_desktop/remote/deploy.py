"""Check a remote host, deploy our hook there, take it away, and say how it stands.

Every step is one ``ssh`` run (see `ssh`): first a small ``/bin/sh`` probe (the remote
HOME, python3 and its version, which agent CLIs are on the PATH), then, on the python3
it found, the `on_host` script with what to do. The token travels inside that script on
ssh's stdin; it is never on a command line and never in a file on the desk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from qoder_desktop.config.secrets import SecretValue
from qoder_desktop.diagnostics.cli_check import CLAUDE_CLI, QODER_CLI
from qoder_desktop.remote.hook_file import MIN_PYTHON, hook_source
from qoder_desktop.remote.hosts import RemoteError
from qoder_desktop.remote.layout import HOOK_NAME, REMOTE_FOLDER, TOKEN_NAME, package_source
from qoder_desktop.remote.ssh import run_remote
from qoder_desktop.terminal.install import Agent

AGENT_COMMANDS: dict[Agent, tuple[str, ...]] = {Agent.CLAUDE: CLAUDE_CLI.commands,
                                                Agent.QODER: QODER_CLI.commands}
"""The CLI names the probe looks for on the host's PATH, per agent."""

_PROBE = """\
printf 'home=%s\\n' "$HOME"
printf 'path=%s\\n' "$PATH"
for name in {commands}; do
  found=$(command -v "$name" 2>/dev/null) && printf 'cli.%s=%s\\n' "$name" "$found"
done
python=$(command -v python3 2>/dev/null) || python=""
if [ -n "$python" ]; then
  printf 'python=%s\\n' "$python"
  "$python" -c 'import sys; print("python_version=%d.%d.%d" % tuple(sys.version_info[:3]))'
fi
exit 0
"""


@dataclass(frozen=True)
class HostProbe:
    """What the probe found on a host.

    Attributes:
        home: the remote user's HOME.
        path: the PATH of an ssh command there.
        python: the python3 on that PATH, or "".
        python_version: its version, or () when it did not say.
        clis: the agent CLIs found, name → path.
    """

    home: str
    path: str
    python: str
    python_version: tuple[int, ...]
    clis: dict[str, str] = field(default_factory=dict)

    def python_problem(self, host: str) -> str | None:
        """Why the hook cannot run on `host`, or None."""
        need = ".".join(map(str, MIN_PYTHON))
        if not self.python:
            return (f"{host} has no python3 on the PATH of an ssh command ({self.path}); "
                    f"the hook needs python3 {need} or newer. Install it there, then try "
                    "again.")
        if not self.python_version:
            return f"{self.python} on {host} did not run; the hook needs python3 {need}+."
        if self.python_version < MIN_PYTHON:
            found = ".".join(map(str, self.python_version))
            return (f"{host} has python3 {found} ({self.python}); the hook needs {need} or "
                    "newer. Install a newer python3 there, then try again.")
        return None

    def agent_cli(self, agent: Agent) -> str | None:
        """Where the agent's CLI is on the host, or None."""
        return next((self.clis[name] for name in AGENT_COMMANDS[agent] if name in self.clis),
                    None)

    def describe(self, host: str) -> str:
        """One line for people: python3 and the agents found."""
        python = (f"python3 {'.'.join(map(str, self.python_version))} ({self.python})"
                  if self.python else "no python3")
        found = []
        for agent in Agent:
            cli = self.agent_cli(agent)
            names = " / ".join(AGENT_COMMANDS[agent])
            found.append(f"{names} found ({cli})" if cli else f"{names} not found")
        return f"{host}: {python}; {'; '.join(found)}"


def probe(host: str, ssh_config: str | None = None) -> HostProbe:
    """Look at `host`: HOME, PATH, python3 and its version, agent CLIs.

    Raises:
        ssh.Unreachable: ssh could not reach or log in to the host.
        RemoteError: the host did not answer as a POSIX shell would.
    """
    commands = " ".join(name for names in AGENT_COMMANDS.values() for name in names)
    result = run_remote(host, ["/bin/sh", "-s"], stdin=_PROBE.format(commands=commands),
                        ssh_config=ssh_config)
    found: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found.setdefault(key, value)
    if "home" not in found or not found["home"].startswith("/"):
        raise RemoteError(f"{host} did not answer the check as a POSIX shell would "
                          f"({result.last_error() or 'no HOME'}).")
    version: tuple[int, ...] = ()
    if found.get("python_version"):
        try:
            version = tuple(int(part) for part in found["python_version"].split("."))
        except ValueError:
            version = ()
    clis = {key.removeprefix("cli."): value for key, value in found.items()
            if key.startswith("cli.")}
    return HostProbe(found["home"], found.get("path", ""), found.get("python", ""), version,
                     clis)


def host_script(action: str, *, agents: Iterable[Agent] = (),
                token: SecretValue | None = None) -> str:
    """The `on_host` script for `action` (``deploy``, ``remove`` or ``status``)."""
    payload: dict[str, Any] = {"action": action, "folder": REMOTE_FOLDER, "hook_name": HOOK_NAME,
                               "token_name": TOKEN_NAME, "agents": [a.value for a in agents]}
    if token is not None:
        payload["token"] = token.reveal()
    on_host = package_source("remote", "on_host.py")
    install = package_source("terminal", "install.py")
    hook_events = package_source("domain", "hook_events.py")
    hook = hook_source() if action == "deploy" else ""
    return (f"{on_host}\n\nsys.exit(main(json.loads({json.dumps(payload)!r}), {install!r}, "
            f"{hook_events!r}, {hook!r}))\n")


def run_on_host(host: str, probe_result: HostProbe, action: str, *,
                ssh_config: str | None = None, agents: Iterable[Agent] = (),
                token: SecretValue | None = None) -> dict[str, Any]:
    """Run the `on_host` script for `action` with the host's python3; its result.

    Raises:
        ssh.Unreachable: ssh could not reach or log in to the host.
        RemoteError: the script failed or reported a problem on the host.
    """
    script = host_script(action, agents=agents, token=token)
    result = run_remote(host, [probe_result.python, "-"], stdin=script, ssh_config=ssh_config)
    try:
        answer = json.loads(result.stdout.strip().splitlines()[-1])
        if not isinstance(answer, dict):
            raise TypeError("not an object")
    except (IndexError, ValueError, TypeError):
        raise RemoteError(f"the script on {host} failed (exit status {result.status}): "
                          f"{result.last_error() or 'no output'}") from None
    if "error" in answer:
        raise RemoteError(f"{host}: {answer['error']}")
    return answer

