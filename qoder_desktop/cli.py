"""Command-line arguments: parsed here, Qt-free, so `ledger export` runs without a display."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from qoder_desktop import __version__
from qoder_desktop.models import Backend, PermissionMode


def build_parser() -> argparse.ArgumentParser:
    """The parser for the app itself (the GUI and its session options)."""
    parser = argparse.ArgumentParser(
        prog="qoder-desktop",
        description="Desktop approval companion for local AI agents. "
        "Run `qoder-desktop ledger export --help` for the decision ledger export.",
    )
    parser.add_argument("--version", action="version", version=f"qoder-desktop {__version__}")
    parser.add_argument("--demo", action="store_true",
                        help="run a scripted agent on loopback (no account, no network needed)")
    parser.add_argument("--scenario", default=None,
                        help="with --demo: which scripted scenario to play (default: demo)")
    parser.add_argument("--self-check", action="store_true",
                        help="check keyring, tray, CLIs and data folders, then exit")
    session = parser.add_argument_group("start a session")
    session.add_argument("--backend", choices=[b.value for b in (Backend.CLAUDE, Backend.QODER)],
                         default=None, help="which agent SDK runs the session")
    session.add_argument("--prompt", default=None, help="the first prompt for the agent")
    session.add_argument("--cwd", default=None, help="the session's working folder")
    session.add_argument("--permission-mode", choices=[m.value for m in PermissionMode],
                         default=None, help="the CLI's permission mode")
    session.add_argument("--add-dir", action="append", default=[], dest="add_dirs",
                         metavar="DIR", help="another folder the agent may use (repeatable)")
    session.add_argument("--allowed-tools", nargs="+", default=[], metavar="RULE",
                         help="rules that are allowed without asking, e.g. 'Bash(git diff *)'")
    session.add_argument("--disallowed-tools", nargs="+", default=[], metavar="RULE",
                         help="rules that are always denied")
    session.add_argument("--model", default=None, help="the model name to ask for")
    session.add_argument("--name", default=None, help="a name for the session")
    return parser


def parse_app_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the app's arguments; a session needs --prompt when --backend is given."""
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.backend and not args.prompt:
        parser.error("--backend needs --prompt: the first thing to ask the agent")
    if args.scenario and not args.demo:
        parser.error("--scenario only works with --demo")
    return args
