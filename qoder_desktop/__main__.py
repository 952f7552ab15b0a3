"""Entry point: `qoder-desktop` / `python -m qoder_desktop`.

Only the GUI path imports Qt, so `qoder-desktop ledger export` and
`qoder-desktop rules check` work without a display, and the terminal hook
(`qoder-desktop hook …`) starts with the standard library only.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["ledger"]:
        from qoder_desktop.store.ledger import ledger_main

        return ledger_main(args_list[1:])
    if args_list[:1] == ["hook"]:  # runs for every terminal prompt: stdlib only
        from qoder_desktop.terminal.hook_client import hook_main

        return hook_main(args_list[1:])
    if args_list[:1] == ["hooks"]:
        from qoder_desktop.terminal.commands import hooks_main

        return hooks_main(args_list[1:])
    if args_list[:1] == ["rules"]:
        from qoder_desktop.rules.check import rules_main

        return rules_main(args_list[1:])
    from qoder_desktop.cli import parse_app_args

    args = parse_app_args(args_list)
    if args.self_check:
        from qoder_desktop.diagnostics.self_check import run_self_check
        from qoder_desktop.notifications.probe import probe_service
        from qoder_desktop.ui.probe import describe_tray

        return run_self_check(tray_probe=describe_tray, notification_probe=probe_service)
    from qoder_desktop.ui.app import run_gui

    return run_gui(args)


if __name__ == "__main__":
    sys.exit(main())
