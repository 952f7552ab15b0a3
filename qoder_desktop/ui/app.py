"""Starting the desktop app: the main window's first frame on Qt's own loop, then one
qasync loop (`AppEventLoop`) for Qt and asyncio, then the wiring.

`run_gui(args)` hands the work over to a running instance when there is one, builds and
shows the main window and runs Qt's own event loop until that window's first frame is on
screen (`scheduling.run_until_first_frame`). Only then does it load what the frame does
not need: asyncio with qasync and the app's loop, the log file, the error reporter, the
database, and `ui.start_up.StartUp`, which loads the rest step by step (pydantic with the
models and the settings, the core, the wiring, the first session, terminal hooks, the
gateway). Nothing can ask for an approval before then: every way in starts in start-up,
after the database is open. Unexpected errors are shown instead of ending the app, and
everything is cleaned up on quit.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QApplication

from qoder_desktop import __version__
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.diagnostics.memory import (
    limit_malloc_arenas,
    pause_collection,
    resume_collection,
)
from qoder_desktop.domain.kinds import DEMO_SCENARIO
from qoder_desktop.ui import icons
from qoder_desktop.ui.lean_imports import lean_imports_after_first_frame
from qoder_desktop.ui.scheduling import run_until_first_frame
from qoder_desktop.ui.single_instance import (
    LOCK_FILE,
    STARTING_WAIT_S,
    claim_instance,
    hand_over,
    hand_over_when_ready,
    server_name,
)
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # loaded after the first frame
    from PySide6.QtCore import QTimer

    from qoder_desktop.config.secrets import RedactSecrets
    from qoder_desktop.diagnostics.about import AboutInfo
    from qoder_desktop.scripted_model.process import ScriptedModelProcess

LOG_MAX_BYTES = 5 * 1024 * 1024
"""The log file's size at which it is rotated (``qoder-desktop.log`` → ``….log.1``)."""
LOG_BACKUPS = 3
"""Rotated log files kept: with the current one at most 20 MiB of log in all."""


def _setup_logging(paths: AppPaths) -> RedactSecrets:
    """Log to the app's log file (rotated at `LOG_MAX_BYTES`, `LOG_BACKUPS` kept) and
    warnings to stderr, secrets masked."""
    import logging
    from logging.handlers import RotatingFileHandler

    from qoder_desktop.config.secrets import RedactSecrets

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

    Automatic garbage collection stays off until the window's first frame.
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
    instance_lock = claim_instance(paths.data_dir)
    if instance_lock is None or not instance_lock.excludes_others:
        # Another instance runs or starts on this data (or no lock can tell): hand over.
        # With the lock, nobody else runs here, and the server's name can wait.
        name = server_name(str(paths.data_dir))
        what = "the demo" if args.demo else "the request"
        if hand_over(name, _handover_message(args)):
            if instance_lock is not None:
                instance_lock.release()
            print(f"Qoder Desktop is already running; {what} went to that window.")
            return 0
        if instance_lock is None:  # it is starting: its server comes after its first frame
            if hand_over_when_ready(name, _handover_message(args)):
                print(f"Qoder Desktop was starting; {what} went to that window.")
                return 0
            print(f"qoder-desktop: another Qoder Desktop holds {paths.data_dir / LOCK_FILE} "
                  f"but has not answered for {STARTING_WAIT_S:g} s; quit it (or wait for it) "
                  "and try again.",
                  file=sys.stderr)
            return 1
    try:
        return _show_then_run(args, app, paths)
    finally:
        instance_lock.release()


class ErrorsBeforeFrame:
    """`sys.excepthook` while the first frame is made, before the error reporter exists:
    an error in a Qt slot then (the first paint) is kept, and `hand_to` gives it to the
    reporter; `close` gives what is left to the hook that was there before (the app ended
    before its reporter existed)."""

    def __init__(self) -> None:
        self.errors: list[tuple[type[BaseException], BaseException, TracebackType | None]] = []
        self._previous = sys.excepthook
        sys.excepthook = self

    def __call__(self, kind: type[BaseException], error: BaseException,
                 tb: TracebackType | None) -> None:
        """Keep one error until there is a hook that shows it."""
        self.errors.append((kind, error, tb))

    def hand_to(self, hook: Callable[[type[BaseException], BaseException,
                                      TracebackType | None], Any]) -> None:
        """Make `hook` the excepthook and give it the errors kept so far."""
        sys.excepthook = hook
        errors, self.errors = self.errors, []
        for error in errors:
            hook(*error)

    def close(self) -> None:
        """If still the excepthook: hand the kept errors back to the previous hook."""
        if sys.excepthook is self:
            self.hand_to(self._previous)


def _show_then_run(args: argparse.Namespace, app: QApplication, paths: AppPaths) -> int:
    """The main window's first frame on Qt's own loop, then the app on its asyncio loop."""
    early_errors = ErrorsBeforeFrame()
    try:
        return _show_window(args, app, paths, early_errors)
    finally:
        early_errors.close()


def _show_window(args: argparse.Namespace, app: QApplication, paths: AppPaths,
                 early_errors: ErrorsBeforeFrame) -> int:
    app.setStyleSheet(icons.stylesheet())  # the application icon follows the first paint
    scenarios = None
    if args.demo:
        from qoder_desktop.scripted_model.scenario_names import builtin_scenario_names

        scenarios = builtin_scenario_names()
    window = MainWindow(scenarios=scenarios)
    try:
        window.restore_state(paths.window_state_file)
        demo_server = _start_demo_model() if args.demo else None  # imports while it paints
        window.show()
        run_until_first_frame(window)
        window.finish_after_first_frame()
        return _run_loop(args, app, paths, window, scenarios, demo_server, early_errors)
    finally:
        window.save_state(paths.window_state_file)


def _start_demo_model() -> ScriptedModelProcess:
    """(--demo) The scripted model's process, started before the window shows, so the
    child starts its interpreter and imports while the window paints."""
    from qoder_desktop.scripted_model.process import ScriptedModelProcess

    server = ScriptedModelProcess()
    server.start()
    return server


def _run_loop(args: argparse.Namespace, app: QApplication, paths: AppPaths,
              window: MainWindow, scenarios: list[str] | None,
              demo_server: ScriptedModelProcess | None, early_errors: ErrorsBeforeFrame) -> int:
    """After the first frame: the log, the error reporter, the app's loop and the
    database (a failure is shown, then the app ends), then `StartUp` loads the rest while
    the loop runs."""
    lean_imports_after_first_frame()  # before the libraries load: unused parts skipped
    limit_malloc_arenas()  # before the app's own threads start
    import asyncio
    from functools import partial

    from qoder_desktop.store.database import Database, StorageError
    from qoder_desktop.ui.error_reporter import ErrorReporter
    from qoder_desktop.ui.event_loop import AppEventLoop
    from qoder_desktop.ui.start_up import StartUp

    redactor = _setup_logging(paths)
    reporter = ErrorReporter(paths.log_file)
    early_errors.hand_to(reporter.excepthook)
    loop = AppEventLoop(app)
    asyncio.set_event_loop(loop)
    loop.set_exception_handler(reporter.loop_exception)
    try:
        db = Database.open(paths.database)
    except StorageError as exc:
        if demo_server is not None:
            demo_server.stop()
        print(f"qoder-desktop: {exc}", file=sys.stderr)
        with loop:
            _show_storage_error(window, str(exc), loop.stop)
            loop.run_forever()
        return 1
    window.help.about_source = partial(_about, paths)
    start_up = StartUp(args, paths, db, None, redactor, window,
                       server_name(str(paths.data_dir)), scenarios, demo_server=demo_server)
    wake_up = _quit_on_signals(start_up.quit)
    resume_collection()  # (paused since the entry point: see `run_gui`)
    try:
        with loop:
            loop.call_soon(start_up.load)
            loop.run_forever()
    finally:
        wake_up.stop()
        start_up.close()
        db.close()
    return 0


def _show_storage_error(window: MainWindow, problem: str, then: Callable[[], object]) -> None:
    """Tell the person the database could not be opened (nothing can be asked or
    recorded without it); `then` runs once they close the box."""
    from PySide6.QtWidgets import QMessageBox

    from qoder_desktop.ui.plain_text import plain_message_box

    box = QMessageBox(QMessageBox.Icon.Critical, "Qoder Desktop cannot start", "", parent=window)
    box.setObjectName("storageErrorBox")
    plain_message_box(box, f"{problem}\n\nQoder Desktop will close.")
    box.finished.connect(lambda _result: then())
    box.open()


def _about(paths: AppPaths) -> AboutInfo:
    """What Help › About shows (loaded when first asked for)."""
    from qoder_desktop.diagnostics.about import about_info

    return about_info(paths)


def _quit_on_signals(quit_app: Callable[[], None]) -> QTimer:
    """Quit cleanly (sessions stopped, scratch folders removed) on SIGINT and SIGTERM.

    Python runs signal handlers only when it gets control, so a timer wakes it up.
    """
    import signal

    from PySide6.QtCore import QTimer

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda _signum, _frame: quit_app())
    timer = QTimer()
    timer.timeout.connect(lambda: None)
    timer.start(250)
    return timer
