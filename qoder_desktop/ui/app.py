"""Starting the desktop app: one qasync loop (`AppEventLoop`) for Qt and asyncio, then the wiring.

`run_gui(args)` paints the main window first and loads the rest after its first paint
(`ui.start_up.StartUp`: pydantic with the models and the settings, the core, the
wiring, the first session, terminal hooks, the gateway). It hands the work over to a
running instance when there is one, shows unexpected errors instead of dying, and cleans
up on quit.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from functools import partial
from logging.handlers import RotatingFileHandler
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from qoder_desktop import __version__
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import RedactSecrets
from qoder_desktop.diagnostics.memory import pause_collection, resume_collection
from qoder_desktop.domain.kinds import DEMO_SCENARIO
from qoder_desktop.store.database import Database, StorageError
from qoder_desktop.ui import icons
from qoder_desktop.ui.error_reporter import ErrorReporter
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.scheduling import after_first_paint
from qoder_desktop.ui.single_instance import (
    LOCK_FILE,
    STARTING_WAIT_S,
    claim_instance,
    hand_over,
    hand_over_when_ready,
    server_name,
)
from qoder_desktop.ui.start_up import StartUp
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # the core (and pydantic with its models) loads after the first paint
    from qoder_desktop.diagnostics.about import AboutInfo

log = logging.getLogger(__name__)


LOG_MAX_BYTES = 5 * 1024 * 1024
"""The log file's size at which it is rotated (``qoder-desktop.log`` → ``….log.1``)."""
LOG_BACKUPS = 3
"""Rotated log files kept: with the current one at most 20 MiB of log in all."""


def _setup_logging(paths: AppPaths) -> RedactSecrets:
    """Log to the app's log file (rotated at `LOG_MAX_BYTES`, `LOG_BACKUPS` kept) and
    warnings to stderr, secrets masked."""
    handler = RotatingFileHandler(paths.log_file, maxBytes=LOG_MAX_BYTES,
                                  backupCount=LOG_BACKUPS, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    root.addHandler(console)
    redactor = RedactSecrets()
    redactor.install(root)
    return redactor


def _handover_message(args: argparse.Namespace) -> dict[str, Any]:
    away = {} if args.away is None else {"away": args.away}  # (--away: the first app turns it on)
    if args.demo:
        return {"action": "demo", "scenario": args.scenario or DEMO_SCENARIO,
                "prompt": args.prompt or "", **away}
    if args.backend and args.prompt:
        return {"action": "start", "argv": sys.argv[1:], "cwd": os.getcwd(), **away}
    return {"action": "show", **away}


def run_gui(args: argparse.Namespace) -> int:
    """Run the desktop app until the person quits; returns the exit code.

    Automatic garbage collection stays off until the window has painted.
    """
    pause_collection()
    try:
        return _run_gui(args)
    finally:
        resume_collection()


def _run_gui(args: argparse.Namespace) -> int:
    paths = AppPaths.default().ensure()
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setApplicationName("Qoder Desktop")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("io.qoder.Desktop")
    app.setQuitOnLastWindowClosed(False)
    name = server_name(str(paths.data_dir))
    what = "the demo" if args.demo else "the request"
    if hand_over(name, _handover_message(args)):
        print(f"Qoder Desktop is already running; {what} went to that window.")
        return 0
    instance_lock = claim_instance(paths.data_dir)
    if instance_lock is None:  # another launch is starting: its server comes after its paint
        if hand_over_when_ready(name, _handover_message(args)):
            print(f"Qoder Desktop was starting; {what} went to that window.")
            return 0
        print(f"qoder-desktop: another Qoder Desktop holds {paths.data_dir / LOCK_FILE} "
              f"but has not answered for {STARTING_WAIT_S:g} s; quit it (or wait for it) and "
              "try again.",
              file=sys.stderr)
        return 1
    redactor = _setup_logging(paths)
    reporter = ErrorReporter(paths.log_file)
    sys.excepthook = reporter.excepthook
    loop = AppEventLoop(app)
    asyncio.set_event_loop(loop)
    loop.set_exception_handler(reporter.loop_exception)
    app.setStyleSheet(icons.stylesheet())  # the application icon follows the first paint
    try:
        db = Database.open(paths.database)
    except StorageError as exc:
        print(f"qoder-desktop: {exc}", file=sys.stderr)
        return 1
    scenarios = None
    if args.demo:
        from qoder_desktop.scripted_model.scenario_names import builtin_scenario_names

        scenarios = builtin_scenario_names()
    window = MainWindow(scenarios=scenarios)
    window.restore_state(paths.window_state_file)
    window.help.about_source = partial(_about, paths)
    start_up = StartUp(args, paths, db, None, redactor, window, name, scenarios)
    start_up.start_demo_model()  # (--demo) its process imports while the window paints
    window.show()
    wake_up = _quit_on_signals(start_up.quit)

    def painted() -> None:
        resume_collection()
        start_up.load()

    try:
        with loop:
            after_first_paint(window, painted)
            loop.run_forever()
    finally:
        wake_up.stop()
        window.save_state(paths.window_state_file)
        start_up.close()
        db.close()
        instance_lock.release()
    return 0


def _about(paths: AppPaths) -> AboutInfo:
    """What Help › About shows (loaded when first asked for)."""
    from qoder_desktop.diagnostics.about import about_info

    return about_info(paths)


def _quit_on_signals(quit_app: Callable[[], None]) -> QTimer:
    """Quit cleanly (sessions stopped, scratch folders removed) on SIGINT and SIGTERM.

    Python runs signal handlers only when it gets control, so a timer wakes it up.
    """
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda _signum, _frame: quit_app())
    timer = QTimer()
    timer.timeout.connect(lambda: None)
    timer.start(250)
    return timer
