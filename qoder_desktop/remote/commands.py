"""``qoder-desktop remote add|remove|status|list|forward``: remote hosts from the command line.

Qt-free; every step is the system ``ssh`` with the person's own configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.remote.actions import Report, add_host, host_status, remove_host
from qoder_desktop.remote.forwarding import forward_host
from qoder_desktop.remote.hosts import HostRegistry, RemoteError
from qoder_desktop.remote.layout import HOOK_NAME, REMOTE_FOLDER, TOKEN_NAME
from qoder_desktop.terminal.install import Agent

_EPILOG = f"""\
HOST is an ssh destination as you type it (user@box, or an alias from ~/.ssh/config):
port, keys, agent and jump hosts come from your OpenSSH configuration. We run the system
ssh with BatchMode=yes (it never asks for a password here: use keys or an ssh-agent)
and never store a password or a key.

`add` checks the host (python3 3.8 or newer, which agent CLIs are there), puts the hook
and a token for this host in ~/{REMOTE_FOLDER}/ there ({HOOK_NAME}, {TOKEN_NAME}; only
you can read them) and our PermissionRequest hook in ~/.claude/settings.json and
~/.qoder/settings.json there (every other key kept, a copy of the old file kept next to
it). The token is kept in this desk's OS keyring. `remove` takes out only our entry,
the hook and the token.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qoder-desktop remote",
        description="Send the permission prompts of agents on other machines (over SSH)\n"
                    "to Qoder Desktop on this desk.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add = commands.add_parser("add", help="check a host and deploy the hook there",
                              epilog=_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add.add_argument("host", metavar="HOST")
    add.add_argument("--agent", choices=["claude", "qoder", "all"], default="all",
                     help="only this agent's settings (default: both)")
    remove = commands.add_parser("remove", help="take our hook (only ours) off a host",
                                 epilog=_EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    remove.add_argument("host", metavar="HOST")
    remove.add_argument("--forget", action="store_true",
                        help="forget the host here even when it cannot be reached")
    status = commands.add_parser("status", help="check each host: reachable, hook, tunnel")
    status.add_argument("host", metavar="HOST", nargs="?",
                        help="only this host (default: every host)")
    commands.add_parser("list", help="the hosts this desk knows (no connection)")
    forward = commands.add_parser(
        "forward", help="who forwards a host's socket: the app's tunnel or your own session")
    forward.add_argument("host", metavar="HOST")
    keeper = forward.add_mutually_exclusive_group()
    keeper.add_argument("--own", dest="own", action="store_true", default=None,
                        help="your own SSH session forwards it (RemoteForward)")
    keeper.add_argument("--app", dest="own", action="store_false",
                        help="the app keeps its ssh tunnel (the default)")
    for sub in (add, remove):
        sub.add_argument("--ssh-config", metavar="FILE", default=None,
                         help="an OpenSSH client config to use instead of ~/.ssh/config "
                              "(ssh -F FILE)")
    return parser


def _print(report: Report) -> None:
    for line in report.lines:
        print(line)


def remote_main(argv: Sequence[str], *, store: SecretStore | None = None,
                registry: HostRegistry | None = None) -> int:
    """Run ``remote`` with `argv`; returns the exit code (1 when it did not succeed)."""
    args = _parser().parse_args(list(argv))
    secrets = store if store is not None else SecretStore()
    hosts = registry if registry is not None else HostRegistry.default()
    try:
        if args.command == "add":
            agents = list(Agent) if args.agent == "all" else [Agent(args.agent)]
            report = add_host(args.host, store=secrets, registry=hosts,
                              ssh_config=args.ssh_config, agents=agents)
        elif args.command == "remove":
            report = remove_host(args.host, store=secrets, registry=hosts,
                                 ssh_config=args.ssh_config, forget=args.forget)
        elif args.command == "status":
            report = _status(hosts, args.host)
        elif args.command == "forward":
            report = forward_host(args.host, hosts, args.own)
        else:
            report = _list(hosts)
    except RemoteError as exc:
        print(f"qoder-desktop remote {args.command}: {exc}", file=sys.stderr)
        return 1
    _print(report)
    return 0 if report.ok else 1


def _status(registry: HostRegistry, only: str | None) -> Report:
    hosts = registry.hosts()
    if only is not None:
        hosts = [host for host in hosts if host.name == only.strip()]
        if not hosts:
            return Report().fail(f"{only}: not one of this desk's remote hosts "
                                 "(see `qoder-desktop remote list`)")
    if not hosts:
        return Report(lines=["No remote hosts yet: `qoder-desktop remote add HOST`."])
    report = Report()
    for host in hosts:
        one = host_status(host)
        report.lines += one.lines
        report.ok = report.ok and one.ok
    return report


def _list(registry: HostRegistry) -> Report:
    hosts = registry.hosts()
    if not hosts:
        return Report(lines=["No remote hosts yet: `qoder-desktop remote add HOST`."])
    lines = []
    for host in hosts:
        config = f", ssh -F {host.ssh_config}" if host.ssh_config else ""
        agents = ", ".join(Agent(a).label for a in host.agents) or "no agent"
        lines.append(f"{host.name}: hook {host.hook_version} for {agents} in "
                     f"{host.remote_folder} (added {host.added}{config})")
    return Report(lines=lines)
