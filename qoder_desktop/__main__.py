"""Entry point: `qoder-desktop` / `python -m qoder_desktop`.

Only the GUI path imports Qt, so `qoder-desktop ledger export` and
`qoder-desktop rules check` work without a display, and the terminal hook
(`qoder-desktop hook …`) starts with the standard library only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

NO_DISPLAY_EXIT = 1
"""The exit status when the window cannot open because there is no display."""
_DISPLAY_PLATFORMS = ("", "xcb", "wayland", "wayland-egl")
"""Qt platforms (by QT_QPA_PLATFORM; "" is Qt's default) that need a display server."""


def missing_display(env: Mapping[str, str] | None = None,
                    platform: str = sys.platform) -> str | None:
    """Why the window cannot open (no display server to draw on), or None when it can.

    Checked before Qt starts: without a display, Qt aborts with a message about
    missing xcb libraries that sends people looking in the wrong place.
    """
    env = os.environ if env is None else env
    if platform in ("darwin", "win32", "cygwin"):
        return None
    qpa = env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()
    if qpa not in _DISPLAY_PLATFORMS:
        return None  # offscreen, vnc, eglfs… bring their own screen
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return ("qoder-desktop: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set), "
            "so the window cannot open.\n"
            "Start it from a desktop session; over SSH, connect with X forwarding "
            "(ssh -X); on a machine without a screen, use a virtual display: "
            "xvfb-run -a qoder-desktop --demo\n"
            "Without a display, `qoder-desktop --self-check` and "
            "`qoder-desktop ledger export` still work.")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    from qoder_desktop.subcommands import find

    command = find(args_list[0]) if args_list else None
    if command is not None:
        return command.run(args_list[1:])
    from qoder_desktop.diagnostics.memory import pause_collection, resume_collection

    pause_collection()  # until the window's first paint (run_gui), see pause_collection
    from qoder_desktop.cli import parse_app_args

    args = parse_app_args(args_list)
    if args.self_check:
        resume_collection()
        from qoder_desktop.away.readiness import check_away
        from qoder_desktop.diagnostics.self_check import run_self_check
        from qoder_desktop.notifications.probe import probe_service
        from qoder_desktop.ui.probe import describe_tray

        return run_self_check(tray_probe=describe_tray, notification_probe=probe_service,
                              away_check=check_away)
    problem = missing_display()
    if problem is not None:
        resume_collection()
        print(problem, file=sys.stderr)
        return NO_DISPLAY_EXIT
    from qoder_desktop.ui.lean_imports import lean_imports_before_first_frame

    lean_imports_before_first_frame()  # before the GUI's imports (the rest: `ui.app`)
    from qoder_desktop.ui.app import run_gui

    return run_gui(args)


if __name__ == "__main__":
    sys.exit(main())
