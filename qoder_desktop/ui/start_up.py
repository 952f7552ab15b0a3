"""What the app loads after the main window's first paint (`StartUp`), step by step.

The window is on screen first (`ui.app` runs Qt's own loop until its first frame, then
the app's asyncio loop, which runs `StartUp.load`): it is built without pydantic and the
domain's models (`domain.kinds` has the enums it needs). Then, each step
in its own loop turn (`scheduling.next_turn`) so the window keeps taking input: the
application icon (the main window's and the dialogs'), pydantic with the models and the
settings, the core and the wiring (`DesktopApp`), the new-session form, the first
session, the terminal hook server, the approval gateway and a warmed dialog. Nothing can
ask for an approval before the core exists: every way in (a session, the terminal hook
server, the gateway) starts after it.
Imports of pydantic, the SDKs and the gateway run on a worker thread, keyring calls on the
keyring's own thread (`config.keyring_calls.keyring_call`), file sweeps on a worker thread.

The sessions a launch asks for start here too: the first one (`start_demo`,
`start_from_args`, risky options confirmed first) and those a later launch hands over
(`on_handover`). `ui.app` imports this module, never the other way round.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import socket
import tempfile
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QApplication

from qoder_desktop.cli import parse_app_args, session_options_from_args
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import RedactSecrets, SecretStore
from qoder_desktop.domain.kinds import DEMO_SCENARIO
from qoder_desktop.store.database import Database
from qoder_desktop.ui.scheduling import next_turn
from qoder_desktop.ui.single_instance import InstanceServer
from qoder_desktop.ui.windows.confirm import (
    UserCancelled,
    dangerous_mode_confirmation,
    risky_options_confirmation,
)
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:
    from qoder_desktop.agents.factory import DemoModel
    from qoder_desktop.config.settings import SettingsLoad
    from qoder_desktop.domain.session_options import SessionOptions
    from qoder_desktop.scripted_model.process import ScriptedModelProcess
    from qoder_desktop.ui.wiring import DesktopApp

log = logging.getLogger(__name__)


DEMO_PROMPT = "Show me what Qoder Desktop can do."
"""The prompt of a demo session started without one."""


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
    from qoder_desktop.domain.session_options import SessionOptions

    desktop.start_session(SessionOptions(
        prompt=prompt or DEMO_PROMPT, cwd=cwd or scratch_workspace(demo), scenario=scenario,
        name=f"Demo ({scenario})"))


def start_from_args(args: argparse.Namespace, desktop: DesktopApp) -> None:
    """Start the session a command line asked for; risky options are confirmed first."""
    backend = desktop.settings.default_backend
    try:
        options = session_options_from_args(args, default_backend=backend)
    except ValueError as exc:
        desktop.window.show_status(f"Could not start the session: {exc}")
        return
    risks = options.risks()
    if not risks:
        desktop.start_session(options)
        return
    desktop.tasks.spawn(_confirm_then_start(desktop, options, risks),
                        "confirming the session options")


async def _confirm_then_start(desktop: DesktopApp, options: SessionOptions,
                              risks: list[str]) -> None:
    mode = options.permission_mode
    box = (dangerous_mode_confirmation(desktop.window, mode, risks=risks)
           if mode.needs_confirmation and len(risks) == 1 else
           risky_options_confirmation(desktop.window, risks, mode))
    try:
        consent = await box.wait()
    except UserCancelled:
        return
    desktop.start_session(options.model_copy(update={"consent": consent}))


def on_handover(message: dict[str, Any], desktop: DesktopApp,
                demo: DemoModel | None = None) -> None:
    """What a later launch sent: show the window, start its session or its demo, turn
    Away mode on (``--away``)."""
    desktop.window.bring_to_front()
    if message.get("away") is not None:
        desktop.away.turn_on(str(message["away"]) or None)
    if message.get("action") == "demo":
        start_demo(desktop, demo, str(message.get("scenario") or DEMO_SCENARIO),
                   str(message.get("prompt") or ""))
    elif message.get("action") == "start":
        try:
            args = parse_app_args([str(part) for part in message.get("argv", [])])
        except SystemExit:
            desktop.window.show_status("A second launch sent arguments that are not valid.")
            return
        base = str(message.get("cwd") or os.getcwd())
        args.cwd = os.path.join(base, args.cwd or ".")
        args.add_dirs = [os.path.join(base, folder) for folder in args.add_dirs]
        start_from_args(args, desktop)


def _initial_session(args: argparse.Namespace, demo: DemoModel | None,
                     desktop: DesktopApp) -> None:
    if demo is not None:
        start_demo(desktop, demo, args.scenario or DEMO_SCENARIO, args.prompt or "",
                   str(demo.workspace))
    elif args.backend:
        start_from_args(args, desktop)


CORE_MODULES: tuple[str, ...] = (
    "qoder_desktop.config.settings", "qoder_desktop.domain.session_options",
    "qoder_desktop.store.ledger", "qoder_desktop.approval.broker",
    "qoder_desktop.agents.hub", "qoder_desktop.agents.factory")
"""pydantic, the domain's models, the settings and the Qt-free core: loaded on a worker
thread right after the first paint, so building the core on the loop imports little."""

WIRING_MODULES: tuple[str, ...] = ("qoder_desktop.ui.wiring",)
"""The wiring with the views it builds (dialogs, tray, settings): imported on the loop in a
turn of its own, before the core is built."""

VIEW_MODULES: tuple[str, ...] = ("qoder_desktop.ui.windows.new_session_form",)
"""Views the first frame does not show, imported on the loop once the core is built."""

PRELOAD_MODULES: tuple[str, ...] = ("qoder_desktop.terminal.server",
                                    "qoder_desktop.gateway.server")
"""Loaded on a worker thread after the first paint (the gateway's HTTP stack loads only
when the first agent connects: `gateway.first_connection`)."""

ADAPTER_MODULES = {"claude": "qoder_desktop.agents.claude", "qoder": "qoder_desktop.agents.qoder"}
"""The adapter (and so the SDK) a first session needs, by backend."""


def preload(modules: tuple[str, ...]) -> None:
    """Import `modules`: Qt-free ones on a worker thread (off the loop), views on the loop."""
    for module in modules:
        importlib.import_module(module)


class StartUp:
    """What `run_gui` loads after the first paint, step by step, and closes at the end.

    The window is on screen first; then the settings (`loaded`, when not given: read
    from `paths` after the paint, their problems shown in the status bar), the core and
    the wiring (`DesktopApp`), the terminal hook server, the first session, the approval
    gateway (its token read off the loop, failing closed when the keyring does not
    answer) and one warmed dialog.
    """

    def __init__(self, args: argparse.Namespace, paths: AppPaths, db: Database,
                 loaded: SettingsLoad | None, redactor: RedactSecrets, window: MainWindow,
                 instance_name: str, scenarios: list[str] | None = None,
                 secrets: SecretStore | None = None,
                 demo_server: ScriptedModelProcess | None = None) -> None:
        self.args, self.paths, self.db, self.loaded = args, paths, db, loaded
        self.redactor, self.window, self._instance_name = redactor, window, instance_name
        self._scenarios = scenarios
        self._secrets = secrets
        self.desktop: DesktopApp | None = None
        self.instance: InstanceServer | None = None
        self.demo_server = demo_server
        self.demo: DemoModel | None = None
        self._task: asyncio.Task[None] | None = None

    def load(self) -> asyncio.Task[None]:
        """Start loading (called once the window has painted); returns the loading task."""
        self._task = asyncio.ensure_future(self._load())
        self._task.add_done_callback(self._loaded)
        return self._task

    def _loaded(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            log.error("start-up failed", exc_info=error)
            self.window.show_status(f"Qoder Desktop could not finish starting: {error}")

    async def _load(self) -> None:
        from qoder_desktop.ui import icons

        app = QApplication.instance()
        if isinstance(app, QApplication):  # for dialogs and message boxes (rendered once, shared)
            app.setWindowIcon(icons.app_icon())
        self.start_demo_model()
        await asyncio.to_thread(preload, CORE_MODULES)
        if self.loaded is None:
            from qoder_desktop.config.settings import load_settings

            self.loaded = load_settings(self.paths.settings_file)
            for problem in self.loaded.problems:
                self.window.show_status(f"Settings: {problem}")
        await next_turn()
        preload(WIRING_MODULES)
        await next_turn()
        await self._demo_ready()
        desktop = self._build_core(self.loaded)
        demo = self.demo
        self.instance = InstanceServer(self._instance_name)
        self.instance.message_received.connect(
            lambda message: on_handover(message, desktop, demo))
        if demo is not None:
            desktop.window.set_scratch_folder(lambda: scratch_workspace(demo))
        desktop.start_notifications()
        await next_turn()  # let the window take input between steps
        preload(VIEW_MODULES)
        await next_turn()
        wanted = list(PRELOAD_MODULES)
        if self.demo is not None or self.args.backend:
            backend = "claude" if self.demo is not None else str(self.args.backend)
            if backend in ADAPTER_MODULES:
                wanted.insert(0, ADAPTER_MODULES[backend])
        from qoder_desktop.agents.factory import sweep_stale_auth_dirs

        other_instance_running = not self.instance.listening
        for folder in await asyncio.to_thread(
                lambda: sweep_stale_auth_dirs(other_instance_running=other_instance_running)):
            log.info("removed a token or MCP config folder a crash left behind: %s", folder)
        await asyncio.to_thread(preload, tuple(wanted[:1]))
        _initial_session(self.args, self.demo, desktop)
        await asyncio.to_thread(preload, tuple(wanted[1:]))
        from qoder_desktop.terminal.server import TerminalHookServer

        hooks = TerminalHookServer(desktop.broker, desktop.hub,
                                   wait_seconds=lambda: desktop.settings.terminal_wait_seconds)
        desktop.start_terminal_hooks(hooks)
        from qoder_desktop.remote.serving import RemoteHooks

        desktop.start_remote_hosts(RemoteHooks(
            desktop.broker, desktop.hub, bindings=hooks.bindings,
            wait_seconds=lambda: desktop.settings.terminal_wait_seconds))
        await self._start_gateway(desktop)
        start_away(self.args, desktop)
        await next_turn()
        warm_dialog(desktop)
        await next_turn()
        from qoder_desktop.diagnostics.memory import settle_memory

        settle_memory()

    def start_demo_model(self) -> None:
        """With --demo, start the scripted model's process (once), unless one was given
        (`run_gui` starts it before the window shows, so the child starts its interpreter
        and imports while the window paints; `_demo_ready` waits for it before the core
        is built)."""
        if self.args.demo and self.demo_server is None:
            from qoder_desktop.scripted_model.process import ScriptedModelProcess

            self.demo_server = ScriptedModelProcess()
            self.demo_server.start()

    async def _demo_ready(self) -> None:
        """With --demo, wait (off the loop) until the scripted model listens and keep it
        as `demo`; when it did not start, the person is told why and no demo runs."""
        if self.demo_server is None:
            return
        try:
            url = await asyncio.to_thread(self.demo_server.base_url)
        except RuntimeError as exc:
            log.error("the demo's scripted model did not start: %s", exc)
            self.window.show_status(f"The demo could not start: {exc}")
            return
        from qoder_desktop.agents.factory import DemoModel

        self.demo = DemoModel(url)

    def _build_core(self, loaded: SettingsLoad) -> DesktopApp:
        """The store, broker, hub and wiring around the window that is already shown (and
        the demo's scripted model, `demo`, with --demo)."""
        from qoder_desktop.agents.factory import SessionLauncher
        from qoder_desktop.agents.hub import SessionHub
        from qoder_desktop.approval.broker import ApprovalBroker
        from qoder_desktop.store.ledger import Ledger
        from qoder_desktop.ui.control.settings import CurrentSettings
        from qoder_desktop.ui.wiring import DesktopApp

        settings = CurrentSettings(loaded.settings, self.paths.settings_file)
        secrets = self._secrets or SecretStore(redactor=self.redactor)
        ledger = Ledger(self.db)
        broker = ApprovalBroker(self.db, ledger)
        launcher = SessionLauncher(secrets, anthropic_base_url=settings.value.anthropic_base_url,
                                   demo=self.demo)
        hub = SessionHub(self.db, ledger, broker, launcher, is_trusted=settings.is_trusted)
        from qoder_desktop.ui.control.away import away_core_factory

        desktop = DesktopApp(broker, hub, secrets, settings,
                             demo_scenarios=self._scenarios, window=self.window,
                             ledger_path=self.db.path,
                             away_core=away_core_factory(broker, self.db, secrets,
                                                         self.paths.data_dir,
                                                         socket.gethostname()))
        self.desktop = desktop
        return desktop

    async def _start_gateway(self, desktop: DesktopApp) -> None:
        """Start the gateway; its token is read from the keyring when first needed (an
        agent's first connection, the "Connect an Agent" dialog, a taken port), so a
        session no agent connects to never loads the keyring. A silent keyring is shown
        then, and the connection is refused."""
        from qoder_desktop.gateway.contract import GatewayToken, LazyGatewayToken, gateway_token
        from qoder_desktop.gateway.instances import InstanceRegistry, copy_folder
        from qoder_desktop.gateway.server import ApprovalGateway

        waiting_text = "Waiting for the keyring (the approval gateway's token)…"

        def read(_token: GatewayToken) -> None:
            desktop.window.clear_status(waiting_text)  # the wait is over
            desktop.servers.token_read()

        token = LazyGatewayToken(
            lambda: gateway_token(desktop.secrets, redactor=self.redactor),
            on_slow=lambda: desktop.window.show_status(waiting_text), on_read=read)
        desktop.start_gateway(ApprovalGateway(desktop.broker, desktop.hub, token,
                                              port=desktop.settings.gateway_port,
                                              data_folder=copy_folder(),
                                              registry=InstanceRegistry.default()), token)

    def quit(self) -> None:
        """Quit cleanly; before the core is loaded, just stop the loop."""
        if self.desktop is not None:
            self.desktop.quit()
            return
        app = QApplication.instance()
        if app is not None:
            app.quit()

    def close(self) -> None:
        """Stop what start-up started (after the loop ended)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        if self.instance is not None:
            self.instance.close()
        if self.demo_server is not None:
            self.demo_server.stop()
        if self.demo is not None:
            self.demo.cleanup()


def start_away(args: argparse.Namespace, desktop: DesktopApp) -> None:
    """Turn Away mode on when ``--away[=ADDRESS]`` or the settings ask for it (its core
    is imported only then)."""
    if args.away is not None or desktop.settings.away.on_at_start:
        desktop.away.turn_on(args.away or None)


def warm_dialog(desktop: DesktopApp) -> None:
    """Warm the dialogs' first-time work and keep spare dialogs ready.

    The first dialog of a run pays for Qt's first layout, fonts and style polish of its
    widgets, and every dialog for building and polishing its widgets; the dialog queue
    does that ahead, one step per loop turn (one dialog of each kind rendered off screen
    and dropped, then one spare of each kind), so a request only fills a spare in.
    Nothing is shown, asked or recorded.
    """
    desktop.dialogs.prepare_spares(warm_up_cwd=os.getcwd())
