"""``qoder-desktop hooks install|uninstall|status``: the terminal hook from the command line.

Qt-free and quick, like ``qoder-desktop ledger``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from qoder_desktop.terminal.install import Agent, Change, InstallError, install, status, uninstall


def _agents(choice: str) -> list[Agent]:
    return list(Agent) if choice == "all" else [Agent(choice)]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qoder-desktop hooks",
        description="Send the permission prompts of the agents you start in a terminal "
                    "(claude, qodercli) to Qoder Desktop.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("install", "add our PermissionRequest hook to the agent's settings"),
                       ("uninstall", "remove our hook (only ours) from the agent's settings")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--agent", choices=["claude", "qoder", "all"], default="all",
                         help="which agent's user settings to change (default: all)")
    commands.add_parser("status", help="say where our hook is installed")
    return parser


def hooks_main(argv: Sequence[str]) -> int:
    """Run ``hooks`` with `argv`; returns the exit code (1 when a file could not change)."""
    args = _parser().parse_args(list(argv))
    if args.command == "status":
        for agent in Agent:
            print(status(agent).describe())
        return 0
    failed = False
    for agent in _agents(args.agent):
        try:
            if args.command == "install":
                change = install(agent)
                done = "installed" if change is Change.WRITTEN else "already installed"
            else:
                change = uninstall(agent)
                done = "uninstalled" if change is Change.WRITTEN else "was not installed"
        except InstallError as exc:
            print(f"qoder-desktop: {agent.label}: {exc}", file=sys.stderr)
            failed = True
            continue
        print(f"{agent.label}: {done} ({status(agent).path})")
    return 1 if failed else 0
