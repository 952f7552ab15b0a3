"""``remote add``, ``remote remove`` and ``remote status`` as steps with reports for people.

Each action returns a `Report`: its lines (what was checked, written, skipped and why) and
whether it succeeded. Nothing here prints; `commands` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.remote.deploy import probe, run_on_host
from qoder_desktop.remote.hook_file import hook_version
from qoder_desktop.remote.hosts import (
    HostRegistry,
    RemoteError,
    RemoteHost,
    check_destination,
    ensure_host_token,
    forget_host_token,
)
from qoder_desktop.remote.layout import REMOTE_FOLDER
from qoder_desktop.remote.ssh import Unreachable
from qoder_desktop.remote.tunnel_state import describe_tunnel
from qoder_desktop.terminal.install import Agent


@dataclass
class Report:
    """What an action did.

    Attributes:
        ok: it did what was asked (at least in part, as each line says).
        lines: one sentence per thing checked or done.
    """

    ok: bool = True
    lines: list[str] = field(default_factory=list)

    def fail(self, text: str) -> Report:
        """Add `text` and mark the action failed."""
        self.lines.append(text)
        self.ok = False
        return self


def _agent_lines(host: str, agents: dict[str, Any], written: str, unchanged: str
                 ) -> tuple[list[str], list[Agent]]:
    """The per-agent lines of a deploy or remove, and the agents where it worked."""
    lines, done = [], []
    for name, entry in agents.items():
        agent = Agent(name)
        if "problem" in entry:
            lines.append(f"{host}: {agent.label}: skipped: {entry['problem']}")
            continue
        word = written if entry.get("change") == "written" else unchanged
        lines.append(f"{host}: {agent.label}: {word} ({entry['path']})")
        done.append(agent)
    return lines, done


def add_host(destination: str, *, store: SecretStore, registry: HostRegistry,
             ssh_config: str | None = None, agents: Sequence[Agent] = tuple(Agent)) -> Report:
    """Check the host, deploy the hook and its token, install our entry in the agents'
    settings there, and remember the host (again: idempotent)."""
    report = Report()
    try:
        name = check_destination(destination)
        found = probe(name, ssh_config)
        report.lines.append(found.describe(name))
        problem = found.python_problem(name)
        if problem:
            return report.fail(problem)
        token = ensure_host_token(store, name)
        answer = run_on_host(name, found, "deploy", ssh_config=ssh_config, agents=agents,
                             token=token)
    except Unreachable as exc:
        return report.fail(f"{destination}: not reachable: {exc}")
    except RemoteError as exc:
        return report.fail(str(exc))
    version = hook_version()
    hook_word = "put" if answer["hook"] == "written" else "already there"
    report.lines.append(f"{name}: hook {version} {hook_word} ({answer['folder']}, only "
                        f"you can read it; token {answer['token']})")
    lines, done = _agent_lines(name, answer["agents"], "installed", "already installed")
    report.lines += lines
    registry.put(RemoteHost(name, ssh_config, found.home, answer["python"], version,
                            [agent.value for agent in done], RemoteHost.now()))
    if not done:
        return report.fail(f"{name}: our hook could not be installed for any agent.")
    return report


def remove_host(destination: str, *, store: SecretStore, registry: HostRegistry,
                ssh_config: str | None = None, forget: bool = False) -> Report:
    """Take our entry (only ours) out of the agents' settings on the host, delete the hook
    and its token there, then forget the host and its token here.

    With `forget`, a host that cannot be reached is forgotten here anyway (the lines say
    what stays on it).
    """
    report = Report()
    try:
        name = check_destination(destination)
        known = registry.get(name)
        config = ssh_config if ssh_config is not None else (known.ssh_config if known else None)
        found = probe(name, config)
        problem = found.python_problem(name)
        if problem:
            raise RemoteError(problem)
        answer = run_on_host(name, found, "remove", ssh_config=config)
    except (Unreachable, RemoteError) as exc:
        reason = f"{destination}: not reachable: {exc}" if isinstance(exc, Unreachable) else (
            str(exc))
        if not forget:
            return report.fail(f"{reason} Nothing was changed; use --forget to forget the "
                               "host here anyway.")
        report.lines.append(reason)
        _forget(destination.strip(), store, registry, report)
        report.lines.append(f"{destination}: forgotten here; its ~/{REMOTE_FOLDER} and our "
                            "entry in its agents' settings stay on it.")
        return report
    lines, _done = _agent_lines(name, answer["agents"], "removed", "was not installed")
    report.lines += lines
    if answer["files"] == "kept":
        return report.fail(f"{name}: the hook and its token stay in {answer['folder']} "
                           "while a settings file still names it; fix that file, then run "
                           "remove again.")
    report.lines.append(f"{name}: {answer['folder']}: {answer['files']}")
    _forget(name, store, registry, report)
    return report


def _forget(name: str, store: SecretStore, registry: HostRegistry, report: Report) -> None:
    removed = registry.remove(name)
    try:
        forget_host_token(store, name)
    except RemoteError as exc:
        report.lines.append(str(exc))
    if removed:
        report.lines.append(f"{name}: removed from this desk's remote hosts")


def host_status(host: RemoteHost) -> Report:
    """How `host` stands: reachable, python3, the hook and its version, our entries in
    the agents' settings, and the tunnel."""
    report = Report(lines=[f"{host.name}" + (f" (ssh -F {host.ssh_config})"
                                             if host.ssh_config else "")])
    try:
        found = probe(host.name, host.ssh_config)
        problem = found.python_problem(host.name)
        if problem:
            raise RemoteError(problem)
        answer = run_on_host(host.name, found, "status", ssh_config=host.ssh_config)
    except Unreachable as exc:
        report.fail(f"  reachable: no — {exc}")
    except RemoteError as exc:
        report.fail(f"  reachable: yes, but {exc}")
    else:
        report.lines.append("  reachable: yes — " + found.describe(host.name).split(": ", 1)[1])
        report.lines += _hook_lines(answer)
    report.lines.append(f"  tunnel: {describe_tunnel(host)}")
    return report


def _hook_lines(answer: dict[str, Any]) -> list[str]:
    deployed = answer.get("hook")
    current = hook_version()
    if not deployed:
        lines = [f"  hook: not installed ({answer['folder']})"]
    elif deployed != current:
        lines = [f"  hook: version {deployed}; this app deploys {current}: run `qoder-desktop "
                 "remote add` again to update it"]
    else:
        lines = [f"  hook: installed, version {deployed} ({answer['folder']})"]
    if deployed and not answer.get("token"):
        lines.append("  token: missing on the host: run `qoder-desktop remote add` again")
    for name, entry in answer["agents"].items():
        label = Agent(name).label
        if entry.get("problem"):
            lines.append(f"  {label}: {entry['problem']}")
        elif not entry.get("installed"):
            lines.append(f"  {label}: not installed ({entry['path']})")
        elif not entry.get("current"):
            lines.append(f"  {label}: an older entry of ours ({entry['path']}); run `remote "
                         "add` again")
        else:
            lines.append(f"  {label}: installed ({entry['path']})")
    return lines
