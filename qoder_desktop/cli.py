"""Command-line arguments: parsed here, Qt-free, so `ledger export` runs without a display."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from qoder_desktop import __version__
from qoder_desktop.domain.kinds import DEMO_SCENARIO, Backend, PermissionMode
from qoder_desktop.subcommands import help_epilog

if TYPE_CHECKING:  # pydantic and the models load after the window's first paint
    from qoder_desktop.domain.session_options import SessionOptions


def scenario_names() -> list[str]:
    """The shipped demo scenarios (read from the package, without loading pydantic)."""
    from importlib import resources  # (only for --help and --scenario: ~3 ms at each start)

    folder = resources.files("qoder_desktop.scripted_model").joinpath("scenarios")
    return sorted(entry.name.removesuffix(".json") for entry in folder.iterdir()
                  if entry.name.endswith(".json"))


class ScenarioOption(argparse.Action):
    """``--scenario NAME``: stored as given (`parse_app_args` checks it); its help lists
    the shipped scenarios, read from the package only when the help is shown."""

    @property  # type: ignore[override]
    def help(self) -> str:
        """The option's help, with the shipped scenarios' names."""
        return (f"with --demo: which scripted scenario to play (default: {DEMO_SCENARIO}); "
                f"one of: {', '.join(scenario_names())}")

    @help.setter
    def help(self, _value: object) -> None:  # argparse sets it; the property makes it
        pass

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        """Store the scenario's name."""
        setattr(namespace, self.dest, values)


def app_defaults() -> dict[str, Any]:
    """Every option of the app's own command line at its default (fresh lists each call):
    what `parse_app_args([])` gives, and the parser's defaults (`build_parser`)."""
    return {"demo": False, "scenario": None, "away": None, "self_check": False,
            "backend": None, "prompt": None, "cwd": None, "permission_mode": None,
            "add_dirs": [], "allowed_tools": [], "disallowed_tools": [], "model": None,
            "name": None}


def build_parser() -> argparse.ArgumentParser:
    """The parser for the app itself (the GUI and its session options)."""
    parser = argparse.ArgumentParser(
        prog="qoder-desktop",
        description="Desktop approval companion for local AI agents: it asks you before an\n"
        "agent runs a tool. Without a command it opens the window (and its tray icon).",
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"qoder-desktop {__version__}")
    parser.add_argument("--demo", action="store_true",
                        help="run a scripted agent on loopback (no account, no network needed)")
    parser.add_argument("--scenario", metavar="NAME", action=ScenarioOption)
    parser.add_argument("--away", nargs="?", const="", metavar="ADDRESS",
                        help="turn Away mode on once the app is up (paired phones answer), "
                        "on ADDRESS (an address of this machine) or the one chosen last "
                        "in Settings → Devices")
    parser.add_argument("--self-check", action="store_true",
                        help="check keyring, tray, CLIs and data folders, then exit")
    session = parser.add_argument_group("start a session")
    session.add_argument("--backend", choices=[b.value for b in (Backend.CLAUDE, Backend.QODER)],
                         help="which agent SDK runs the session")
    session.add_argument("--prompt", help="the first prompt for the agent")
    session.add_argument("--cwd", help="the session's working folder")
    session.add_argument("--permission-mode", choices=[m.value for m in PermissionMode],
                         help="the CLI's permission mode")
    session.add_argument("--add-dir", action="append", dest="add_dirs",
                         metavar="DIR", help="another folder the agent may use (repeatable)")
    session.add_argument("--allowed-tools", nargs="+", metavar="RULE",
                         help="rules that are allowed without asking, e.g. 'Bash(git diff *)'")
    session.add_argument("--disallowed-tools", nargs="+", metavar="RULE",
                         help="rules that are always denied")
    session.add_argument("--model", help="the model name to ask for")
    session.add_argument("--name", help="a name for the session")
    parser.set_defaults(**app_defaults())
    return parser


def parse_app_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the app's arguments; a session needs --prompt when --backend is given.

    No arguments (the app started from a menu or a launcher) give `app_defaults`
    without building the parser: argparse's formatters, their patterns and gettext's
    locale lookup cost ~3 ms before the window's first frame.
    """
    if not argv:
        return argparse.Namespace(**app_defaults())
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.backend and not args.prompt:
        parser.error("--backend needs --prompt: the first thing to ask the agent")
    if args.scenario and not args.demo:
        parser.error("--scenario only works with --demo")
    if args.scenario is not None and args.scenario not in (names := scenario_names()):
        parser.error(f"unknown scenario {args.scenario!r}; choose one of: {', '.join(names)}")
    return args


def session_options_from_args(args: argparse.Namespace, *,
                              default_backend: Backend = Backend.CLAUDE,
                              default_mode: PermissionMode = PermissionMode.DEFAULT,
                              ) -> SessionOptions:
    """The session a command line asks for (`--backend/--prompt/...`).

    Risky options (`SessionOptions.risks`, e.g. ``--permission-mode acceptEdits``) come
    back without consent: the app asks the person in the confirmation dialog, whose
    consent the start needs.

    Raises:
        ValueError: the options are invalid (the message says which).
    """
    from pydantic import ValidationError

    from qoder_desktop.domain.session_options import SessionOptions

    fields = {
        "backend": Backend(args.backend) if args.backend else default_backend,
        "prompt": args.prompt or "",
        "name": args.name or "",
        "cwd": os.path.abspath(args.cwd or os.getcwd()),
        "add_dirs": [os.path.abspath(d) for d in args.add_dirs],
        "allowed_tools": list(args.allowed_tools),
        "disallowed_tools": list(args.disallowed_tools),
        "permission_mode": (PermissionMode(args.permission_mode) if args.permission_mode
                            else default_mode),
        "model": args.model,
    }
    try:
        return SessionOptions(**fields)
    except ValidationError as exc:
        problems = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
        raise ValueError(problems) from None
