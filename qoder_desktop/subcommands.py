"""The subcommands of ``qoder-desktop``: one table for the dispatch and for ``--help``.

Stdlib only: ``qoder-desktop hook …`` runs for every terminal prompt and must start fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Subcommand:
    """A word after ``qoder-desktop`` that runs a command instead of the window.

    Attributes:
        name: the word, e.g. ``"rules"``.
        usage: its short form for the top-level help.
        summary: what it does, one line.
        target: ``"module:function"``; the function takes the arguments after the word
            and returns the exit status.
    """

    name: str
    usage: str
    summary: str
    target: str

    def run(self, argv: Sequence[str]) -> int:
        """Import the command's module (only now) and run it."""
        module, _, function = self.target.partition(":")
        main: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
        return main(list(argv))


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("ledger", "ledger export [--format csv|jsonl] [--session ID] [--output FILE]",
               "write the decision ledger (who decided what) as CSV or JSON Lines",
               "qoder_desktop.store.ledger_export:ledger_main"),
    Subcommand("rules", "rules check [--cwd DIR] [--rule RULE]... TOOL INPUT_JSON | --batch",
               "what a tool call gets under given rules (explains, never allows)",
               "qoder_desktop.rules.check:rules_main"),
    Subcommand("hooks", "hooks install|uninstall|status [--agent claude|qoder]",
               "send prompts of claude / qodercli in a terminal to Qoder Desktop",
               "qoder_desktop.terminal.commands:hooks_main"),
    Subcommand("remote", "remote add|remove|status|list|forward [HOST] [--ssh-config FILE]",
               "send prompts of agents on other machines (over SSH) to Qoder Desktop",
               "qoder_desktop.remote.commands:remote_main"),
    Subcommand("hook", "hook permission-request --agent claude|qoder",
               "the hook itself, run by the agent's CLI (see `hooks install`)",
               "qoder_desktop.terminal.hook_client:hook_main"),
    Subcommand("scripted-model", "scripted-model [-h]",
               "serve the scripted model `--demo` runs (loopback; until stdin closes)",
               "qoder_desktop.scripted_model.process:serve_main"),
)
"""Every subcommand, in the order the help lists them."""


def find(name: str) -> Subcommand | None:
    """The subcommand called `name`, or None."""
    return next((command for command in SUBCOMMANDS if command.name == name), None)


def help_epilog() -> str:
    """The subcommand list at the end of ``qoder-desktop --help``."""
    lines = ["commands (each has its own --help, e.g. `qoder-desktop rules --help`):"]
    for command in SUBCOMMANDS:
        lines += [f"  qoder-desktop {command.usage}", f"      {command.summary}"]
    return "\n".join(lines)
