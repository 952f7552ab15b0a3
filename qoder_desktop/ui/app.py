"""Starting the desktop app: one qasync loop (`AppEventLoop`) for Qt and asyncio, then the wiring.

`run_gui(args)` opens the main window (with a session when `--demo` or
`--backend/--prompt` asked for one), hands the work over to a running instance when
there is one, shows unexpected errors instead of dying, and cleans up on quit.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import tempfile
import traceback
from types import TracebackType
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from qoder_desktop import __version__
from qoder_desktop.agents.factory import (
    DEMO_SCENARIO,
    DemoModel,
    SessionLauncher,
    sweep_stale_auth_dirs,
)
from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.cli import session_options_from_args
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import RedactSecrets, SecretStore
from qoder_desktop.config.settings import load_settings
from qoder_desktop.diagnostics.memory import settle_memory
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.store.database import Database, StorageError
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.ui import icons
from qoder_desktop.ui.control.settings import CurrentSettings
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.single_instance import InstanceServer, hand_over, server_name
from qoder_desktop.ui.windows.confirm import (
    UserCancelled,
    dangerous_mode_confirmation,
    risky_options_confirmation,
)
from qoder_desktop.ui.wiring import DesktopApp

log = logging.getLogger(__name__)


def _setup_logging(paths: AppPaths) -> RedactSecrets:
    handler = logging.FileHandler(paths.state_dir / "qoder-desktop.log", encoding="utf-8")
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


class ErrorReporter:
    """Shows unexpected errors in a (non-blocking) message box instead of dying."""

    def __init__(self) -> None:
        self._boxes: list[QMessageBox] = []

    def excepthook(self, kind: type[BaseException], error: BaseException,
                   tb: TracebackType | None) -> None:
        """`sys.excepthook`: log the error and show it."""
        log.error("unexpected error", exc_info=(kind, error, tb))
        self.show(f"{kind.__name__}: {error}",
                  "".join(traceback.format_exception(kind, error, tb))[-4000:])

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The asyncio loop's exception handler."""
        error = context.get("exception")
        log.error("unexpected error in the event loop: %s", context.get("message"),
                  exc_info=error if isinstance(error, BaseException) else None)
        if isinstance(error, BaseException):
            self.show(f"{type(error).__name__}: {error}", str(context.get("message", "")))

    def show(self, text: str, details: str = "") -> None:
        """Open a message box with `text` (plain text, never rich text)."""
        if QApplication.instance() is None:
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Qoder Desktop — unexpected error", "")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(f"Something went wrong, but Qoder Desktop keeps running.\n\n{text}")
        if details:
            box.setDetailedText(details)
        box.finished.connect(lambda _code, b=box: self._boxes.remove(b))
        self._boxes.append(box)
        box.open()


DEMO_PROMPT = "Show me what Qoder Desktop can do."


def _handover_message(args: argparse.Namespace) -> dict[str, Any]:
    if args.demo:
        return {"action": "demo", "scenario": args.scenario or DEMO_SCENARIO,
                "prompt": args.prompt or ""}
    if args.backend and args.prompt:
        return {"action": "start", "argv": sys.argv[1:], "cwd": os.getcwd()}
    return {"action": "show"}


def _initial_session(args: argparse.Namespace, demo: DemoModel | None,
                     desktop: DesktopApp) -> None:
    if demo is not None:
        start_demo(desktop, demo, args.scenario or DEMO_SCENARIO, args.prompt or "",
                   str(demo.workspace))
    elif args.backend:
        start_from_args(args, desktop)


def scratch_workspace(demo: DemoModel) -> str:
    """A fresh, empty scratch folder for one more demo session (removed with the demo's)."""
    demo.root.mkdir(parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix="workspace-", dir=demo.root)


def start_demo(desktop: DesktopApp, demo: DemoModel | None, scenario: str, prompt: str,
               cwd: str | None = None) -> None:
    """Start a scripted demo session (in a fresh scratch folder unless `cwd` is given).

    Without a scripted model (the app runs without --demo) nothing starts: the person is
    told why, since a demo session there would talk to the real model service.
    """
    if demo is None:
        desktop.window.show_status(
            "A demo was asked for, but this Qoder Desktop runs without --demo: quit it, "
            "then run qoder-desktop --demo.")
        return
    desktop.start_session(SessionOptions(
        prompt=prompt or DEMO_PROMPT, cwd=cwd or scratch_workspace(demo), scenario=scenario,
        name=f"Demo ({scenario})"))


def start_from_args(args: argparse.Namespace, desktop: DesktopApp) -> None:
    """Start the session a command line asked for; risky options are confirmed first."""
    backend = desktop.settings.default_backend
    try:
        confirmed = session_options_from_args(args, default_backend=backend,
                                              bypass_confirmed=True)
    except ValueError as exc:
        desktop.window.show_status(f"Could not start the session: {exc}")
        return
    risks = confirmed.risks()
    if not risks:
        desktop.start_session(confirmed.model_copy(update={"bypass_confirmed": False}))
        return
    desktop.tasks.spawn(_confirm_then_start(desktop, confirmed, risks),
                        "confirming the session options")


async def _confirm_then_start(desktop: DesktopApp, confirmed: SessionOptions,
                              risks: list[str]) -> None:
    mode = confirmed.permission_mode
    box = (dangerous_mode_confirmation(desktop.window, mode)
           if mode.needs_confirmation and len(risks) == 1 else
           risky_options_confirmation(desktop.window, risks))
    try:
        await box.wait()
    except UserCancelled:
        return
    desktop.start_session(confirmed)


def run_gui(args: argparse.Namespace) -> int:
    """Run the desktop app until the person quits; returns the exit code."""
    paths = AppPaths.default().ensure()
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setApplicationName("Qoder Desktop")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("io.qoder.Desktop")
    app.setQuitOnLastWindowClosed(False)
    name = server_name(str(paths.data_dir))
    if hand_over(name, _handover_message(args)):
        what = "the demo" if args.demo else "the request"
        print(f"Qoder Desktop is already running; {what} went to that window.")
        return 0
    redactor = _setup_logging(paths)
    reporter = ErrorReporter()
    sys.excepthook = reporter.excepthook
    loop = AppEventLoop(app)
    asyncio.set_event_loop(loop)
    loop.set_exception_handler(reporter.loop_exception)
    app.setWindowIcon(icons.app_icon())
    app.setStyleSheet(icons.stylesheet())

    loaded = load_settings(paths.settings_file)
    try:
        db = Database.open(paths.database)
    except StorageError as exc:
        print(f"qoder-desktop: {exc}", file=sys.stderr)
        return 1
    secrets = SecretStore(redactor=redactor)
    demo_server = demo = None
    if args.demo:
        from qoder_desktop.scripted_model.scenario import builtin_scenario_names
        from qoder_desktop.scripted_model.server import ThreadedScriptedModel

        demo_server = ThreadedScriptedModel()
        demo_server.start()
        demo = DemoModel(demo_server.base_url)
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    launcher = SessionLauncher(secrets, anthropic_base_url=loaded.settings.anthropic_base_url,
                               demo=demo)
    settings = CurrentSettings(loaded.settings, paths.settings_file)
    hub = SessionHub(db, ledger, broker, launcher, is_trusted=settings.is_trusted)
    desktop = DesktopApp(broker, hub, secrets, settings,
                         demo_scenarios=builtin_scenario_names() if demo else None)
    instance = InstanceServer(name)
    instance.message_received.connect(lambda message: _on_handover(message, desktop, demo))
    if demo is not None:
        desktop.window.set_scratch_folder(lambda: scratch_workspace(demo))
    desktop.window.restore_state(paths.window_state_file)
    desktop.show()
    wake_up = _quit_on_signals(desktop)
    for problem in loaded.problems:
        desktop.window.show_status(f"Settings: {problem}")
    try:
        with loop:
            loop.call_soon(_after_shown, args, demo, desktop, redactor,
                           not instance.listening)
            loop.run_forever()
    finally:
        wake_up.stop()
        desktop.window.save_state(paths.window_state_file)
        instance.close()
        if demo_server is not None:
            demo_server.stop()
        if demo is not None:
            demo.cleanup()
        db.close()
    return 0


def _after_shown(args: argparse.Namespace, demo: DemoModel | None, desktop: DesktopApp,
                 redactor: RedactSecrets, other_instance_running: bool = True) -> None:
    """Work that can wait until the window is on screen: the sweep of secrets a crash
    left behind, the gateway, terminal hooks, the first session."""
    from qoder_desktop.gateway.contract import gateway_token
    from qoder_desktop.gateway.server import ApprovalGateway
    from qoder_desktop.terminal.server import TerminalHookServer

    desktop.start_notifications()
    for folder in sweep_stale_auth_dirs(other_instance_running=other_instance_running):
        log.info("removed a token or MCP config folder a crash left behind: %s", folder)
    token = gateway_token(desktop.secrets, redactor=redactor)
    desktop.start_gateway(ApprovalGateway(desktop.broker, desktop.hub, token,
                                          port=desktop.settings.gateway_port), token)
    desktop.start_terminal_hooks(TerminalHookServer(
        desktop.broker, desktop.hub, wait_seconds=lambda: desktop.settings.terminal_wait_seconds))
    _initial_session(args, demo, desktop)
    settle_memory()


def _quit_on_signals(desktop: DesktopApp) -> QTimer:
    """Quit cleanly (sessions stopped, scratch folders removed) on SIGINT and SIGTERM.

    Python runs signal handlers only when it gets control, so a timer wakes it up.
    """
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda _signum, _frame: desktop.quit())
    timer = QTimer()
    timer.timeout.connect(lambda: None)
    timer.start(250)
    return timer


def _on_handover(message: dict[str, Any], desktop: DesktopApp,
                 demo: DemoModel | None = None) -> None:
    desktop.window.bring_to_front()
    if message.get("action") == "demo":
        start_demo(desktop, demo, str(message.get("scenario") or DEMO_SCENARIO),
                   str(message.get("prompt") or ""))
    elif message.get("action") == "start":
        from qoder_desktop.cli import parse_app_args

        try:
            args = parse_app_args([str(part) for part in message.get("argv", [])])
        except SystemExit:
            desktop.window.show_status("A second launch sent arguments that are not valid.")
            return
        base = str(message.get("cwd") or os.getcwd())
        args.cwd = os.path.join(base, args.cwd or ".")
        args.add_dirs = [os.path.join(base, folder) for folder in args.add_dirs]
        start_from_args(args, desktop)
