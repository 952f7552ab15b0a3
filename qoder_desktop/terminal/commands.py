"""``qoder-desktop hooks install|uninstall|status``: the terminal hook from the command line.

Without ``--agent``, ``install`` changes the agents that are there (their CLI on ``PATH``,
or their settings folder exists); every agent gets one line: done, already, or skipped
and why. The exit status is 1 only when nothing could be done for any agent.
Qt-free and quick, like ``qoder-desktop ledger``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from qoder_desktop.diagnostics.cli_check import CLAUDE_CLI, QODER_CLI, CliSpec
from qoder_desktop.terminal.install import (
    Agent,
    Change,
    InstallError,
    install,
    settings_path,
    status,
    uninstall,
)

_SPECS: dict[Agent, CliSpec] = {Agent.CLAUDE: CLAUDE_CLI, Agent.QODER: QODER_CLI}


def find_agent(agent: Agent, environ: Mapping[str, str] | None = None) -> str | None:
    """Where the agent shows it is installed for this user, or None when it does not.

    The signs, in order: its CLI's override variable (``QODERCLI_PATH``) naming a file,
    its CLI on ``PATH`` (the names its SDK tries, see `diagnostics.cli_check`), or its
    settings folder (``~/.claude`` or ``$CLAUDE_CONFIG_DIR``, ``~/.qoder``). The CLI that
    an SDK bundles does not count: nobody starts that one in a terminal.
    """
    env = os.environ if environ is None else environ
    spec = _SPECS[agent]
    override = env.get(spec.override_env, "") if spec.override_env else ""
    if override and Path(override).is_file():
        return f"{spec.override_env}={override}"
    for command in spec.commands:
        found = shutil.which(command, path=env.get("PATH", ""))
        if found:
            return found
    folder = settings_path(agent, env).parent
    return str(folder) if folder.is_dir() else None


def _not_found(agent: Agent, environ: Mapping[str, str] | None) -> str:
    spec = _SPECS[agent]
    folder = settings_path(agent, environ).parent
    return (f"{' / '.join(spec.commands)} not found (not on PATH, no {folder}); "
            f"use --agent {agent.value} to change its settings anyway")


class Outcome(StrEnum):
    """What happened for one agent."""

    DONE = "done"
    ALREADY = "already"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class AgentReport:
    """One agent's line in the report.

    Attributes:
        agent: the agent.
        outcome: done, already, or skipped.
        text: the line for people (names the settings file, or why it was skipped).
    """

    agent: Agent
    outcome: Outcome
    text: str


def _apply(command: str, agent: Agent, environ: Mapping[str, str] | None) -> AgentReport:
    path = settings_path(agent, environ)
    try:
        if command == "install":
            change = install(agent, environ=environ)
            words = ("installed", "already installed")
        else:
            change = uninstall(agent, environ=environ)
            words = ("uninstalled", "already not installed")
    except InstallError as exc:
        return AgentReport(agent, Outcome.SKIPPED, f"{agent.label}: skipped: {exc}")
    if change is Change.WRITTEN:
        return AgentReport(agent, Outcome.DONE, f"{agent.label}: {words[0]} ({path})")
    return AgentReport(agent, Outcome.ALREADY, f"{agent.label}: {words[1]} ({path})")


def _status(agent: Agent, environ: Mapping[str, str] | None, chosen: bool) -> AgentReport:
    found = status(agent, environ=environ)
    if found.problem:
        return AgentReport(agent, Outcome.SKIPPED, f"{agent.label}: {found.problem}")
    text = found.describe()
    if not found.installed and not chosen and find_agent(agent, environ) is None:
        spec = _SPECS[agent]
        text += f"; {' / '.join(spec.commands)} not found"
    return AgentReport(agent, Outcome.DONE, text)


def run(command: str, choice: str | None,
        environ: Mapping[str, str] | None = None) -> list[AgentReport]:
    """Run ``install``, ``uninstall`` or ``status`` for `choice` (None: the default)."""
    chosen = choice is not None
    agents = list(Agent) if choice in (None, "all") else [Agent(choice)]
    reports = []
    for agent in agents:
        if command == "status":
            reports.append(_status(agent, environ, chosen))
        elif command == "install" and not chosen and find_agent(agent, environ) is None:
            reports.append(AgentReport(agent, Outcome.SKIPPED,
                                       f"{agent.label}: skipped: {_not_found(agent, environ)}"))
        else:
            reports.append(_apply(command, agent, environ))
    return reports


_EPILOG = """\
Without --agent: install changes the agents found on this machine (their CLI on PATH,
or their settings folder exists); uninstall and status look at both. Each agent gets
one line: done, already, or skipped and why. The exit status is 1 only when nothing
could be done for any agent. Claude Code's settings: $CLAUDE_CONFIG_DIR/settings.json
or ~/.claude/settings.json; qodercli's: ~/.qoder/settings.json. Every other key and
hook in them is kept, and a copy of the old file is kept next to it.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qoder-desktop hooks",
        description="Send the permission prompts of the agents you start in a terminal\n"
                    "(claude, qodercli) to Qoder Desktop: our PermissionRequest hook in\n"
                    "their user settings.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, text in (("install", "add our hook to the agents' user settings"),
                       ("uninstall", "remove our hook (only ours) from their settings"),
                       ("status", "say where our hook is installed")):
        sub = commands.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".",
                                  epilog=_EPILOG,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        sub.add_argument("--agent", choices=["claude", "qoder", "all"], default=None,
                         help="only this agent, found or not (all: both); default: "
                              + ("the agents found" if name == "install" else "both"))
    return parser


def hooks_main(argv: Sequence[str]) -> int:
    """Run ``hooks`` with `argv`; returns the exit code (1 when nothing could be done)."""
    args = _parser().parse_args(list(argv))
    reports = run(args.command, args.agent)
    for report in reports:
        print(report.text)
    if all(report.outcome is Outcome.SKIPPED for report in reports):
        print(f"qoder-desktop hooks {args.command}: nothing could be done for any agent.",
              file=sys.stderr)
        return 1
    return 0
