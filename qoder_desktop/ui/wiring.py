"""The one place that wires the Qt views to the core (qutebrowser's `_connect_signals`).

`DesktopApp` owns the views (main window, tray, dialogs) and the bridge to the broker,
subscribes to the session hub, and turns the views' intents into core calls. Long
work (starting a CLI, keyring calls) runs as asyncio tasks whose references are kept.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from qoder_desktop.agents.hub import HubEvent, HubEventKind, SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.keyring_calls import keyring_call
from qoder_desktop.config.secrets import SecretName, SecretStore
from qoder_desktop.config.settings import Settings, save_settings
from qoder_desktop.diagnostics.memory import settle_memory
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    DecisionKind,
    PermissionMode,
)
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.gateway.contract import GatewayToken, client_snippets, gateway_url
from qoder_desktop.ui.bridge import BrokerBridge
from qoder_desktop.ui.dialog_queue import DialogQueue
from qoder_desktop.ui.dialogs import PlanDialog
from qoder_desktop.ui.tray import Tray
from qoder_desktop.ui.windows.connect_dialog import ConnectAgentDialog
from qoder_desktop.ui.windows.main_window import MainWindow
from qoder_desktop.ui.windows.settings_dialog import SettingsDialog

if TYPE_CHECKING:  # the gateway (and the mcp SDK) loads after the window is shown
    from qoder_desktop.gateway.server import ApprovalGateway
    from qoder_desktop.terminal.server import TerminalHookServer

log = logging.getLogger(__name__)


class DesktopApp:
    """The running desktop app: views, bridge and core, wired together once."""

    def __init__(self, broker: ApprovalBroker, hub: SessionHub, secrets: SecretStore,
                 settings: Settings, settings_path: Any, *,
                 demo_scenarios: list[str] | None = None,
                 window: MainWindow | None = None) -> None:
        self.broker = broker
        self.hub = hub
        self.secrets = secrets
        self.settings = settings
        self._settings_path = settings_path
        self._tasks: set[asyncio.Task[Any]] = set()
        self._plan_modes: dict[str, str] = {}
        # `run_gui` builds (and paints) the window before the core exists.
        self.window = window if window is not None else MainWindow(scenarios=demo_scenarios)
        if window is not None and demo_scenarios is not None:
            window.set_demo_scenarios(demo_scenarios)
        self.bridge = BrokerBridge(broker)
        self.dialogs = DialogQueue(None)
        self.tray = Tray(self.window)
        self.tray_available = Tray.is_available()
        log.info("system tray available: %s", self.tray_available)
        self.settings_dialog: SettingsDialog | None = None
        self.connect_dialog: ConnectAgentDialog | None = None
        self.gateway: ApprovalGateway | None = None
        self.gateway_token: GatewayToken | None = None
        self.gateway_status = "The approval gateway is not running."
        self.terminal_hooks: TerminalHookServer | None = None
        self._views_pending: list[ApprovalRequest] | None = None
        self._unsubscribe_hub = hub.subscribe(self._on_hub_event)
        self._connect_signals()
        self.window.set_tray_available(self.tray_available)
        self.window.set_new_session_defaults(SessionOptions(
            backend=settings.default_backend, permission_mode=settings.default_permission_mode,
            model=settings.default_model, allowed_tools=list(settings.default_allowed_tools),
            disallowed_tools=list(settings.default_disallowed_tools)))
        if self.tray_available:
            self.tray.show()

    # -- wiring ----------------------------------------------------------------------

    def _connect_signals(self) -> None:
        window, tray, bridge, dialogs = self.window, self.tray, self.bridge, self.dialogs
        bridge.pending_changed.connect(self._on_pending_changed)
        bridge.request_added.connect(self._on_request_added)
        bridge.request_answered.connect(self._on_request_answered)
        dialogs.decided.connect(self._on_decided)
        dialogs.build_failed.connect(self._on_build_failed)
        dialogs.dialog_opened.connect(self._on_dialog_opened)
        window.new_session_requested.connect(self.start_session)
        window.prompt_requested.connect(
            lambda sid, text: self._spawn(self.hub.send(sid, text), "sending the prompt"))
        window.interrupt_requested.connect(
            lambda sid: self._spawn(self.hub.interrupt(sid), "interrupting"))
        window.stop_requested.connect(lambda sid: self._spawn(self.hub.stop(sid), "stopping"))
        window.mode_change_requested.connect(self._on_mode_change)
        window.revoke_requested.connect(self.hub.revoke_rule)
        window.open_request_requested.connect(dialogs.open)
        window.session_selected.connect(self._show_session)
        window.settings_requested.connect(self.open_settings)
        window.connect_agent_requested.connect(self.open_connect_dialog)
        window.quit_requested.connect(self.quit)
        window.visibility_changed.connect(tray.set_window_visible)
        tray.open_request.connect(self._open_from_tray)
        tray.activate_window.connect(window.bring_to_front)
        tray.toggle_window.connect(self._toggle_window)
        tray.quit_requested.connect(self.quit)

    def _spawn(self, coroutine: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run `coroutine` as a task whose reference is kept; failures reach the user."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                error = finished.exception()
                log.error("%s failed: %s", what, error)
                self.window.show_status(f"{what.capitalize()} failed: {error}")

        task.add_done_callback(done)
        return task

    # -- broker side -----------------------------------------------------------------

    def _on_pending_changed(self, pending: list[ApprovalRequest]) -> None:
        # The dialog first: it is what the person waits for (request → dialog visible).
        self.dialogs.set_pending(pending)
        # The window's queue and the tray follow two loop turns later, with the newest
        # list by then. Two, because Qt runs what is due in the next turn before the
        # window-system events, among them the new dialog's expose.
        scheduled = self._views_pending is not None
        self._views_pending = pending
        if not scheduled:
            QTimer.singleShot(0, self.window, lambda: QTimer.singleShot(
                0, self.window, self._update_pending_views))

    def _update_pending_views(self) -> None:
        pending, self._views_pending = self._views_pending, None
        if pending is not None:
            self.window.set_pending(pending)
            self.tray.set_pending(pending)

    def _on_request_added(self, request: ApprovalRequest) -> None:
        app = QApplication.instance()
        inactive = app is None or QApplication.activeWindow() is None
        prefs = self.settings.notifications
        if self.tray_available and prefs.enabled and (inactive or not prefs.only_when_inactive):
            self.tray.notify(request, sound=prefs.sound)

    def _on_request_answered(self, request: ApprovalRequest, decision: Decision) -> None:
        if decision.kind is DecisionKind.ALLOW_SESSION:
            self.hub.rules_changed(request.session_id)
        mode = self._plan_modes.pop(request.request_id, None)
        if request.backend is Backend.TERMINAL:
            mode = None  # a terminal CLI switches its own mode; we cannot reach it
        if mode and decision.kind.allows and mode != PermissionMode.PLAN.value:
            self._spawn(self.hub.set_mode(request.session_id, PermissionMode(mode)),
                        "switching the permission mode")

    def _on_dialog_opened(self, dialog: object) -> None:
        if isinstance(dialog, PlanDialog):
            request_id = dialog.request.request_id
            dialog.continue_mode.connect(
                lambda mode, rid=request_id: self._plan_modes.__setitem__(rid, mode))

    def _on_decided(self, request_id: str, decision: Decision) -> None:
        if not self.bridge.answer(request_id, decision):
            self.window.show_status("That request was already answered or withdrawn.")

    def _on_build_failed(self, request_id: str, message: str) -> None:
        self.bridge.answer(request_id, Decision.error(message))
        self.window.show_status(message)

    def _open_from_tray(self, request_id: str) -> None:
        self.window.bring_to_front()
        if self.bridge.is_pending(request_id):
            self.dialogs.open(request_id)

    def _toggle_window(self) -> None:
        if self.window.isVisible():
            self.window.hide()
        else:
            self.window.bring_to_front()

    # -- hub side --------------------------------------------------------------------

    def _on_hub_event(self, event: HubEvent) -> None:
        if event.kind is HubEventKind.SESSION and event.session is not None:
            self.window.update_session(event.session)
        elif event.kind is HubEventKind.TRANSCRIPT and event.line is not None:
            self.window.append_transcript(event.line)
        elif event.kind is HubEventKind.RULES:
            self.window.set_rules(event.session_id, self.hub.rules(event.session_id))

    def _show_session(self, session_id: str) -> None:
        self.window.set_transcript(session_id, self.hub.transcript(session_id))
        self.window.set_rules(session_id, self.hub.rules(session_id))

    def start_session(self, options: SessionOptions) -> asyncio.Task[Any]:
        """Start a session in the background; the window shows it at once.

        The first session loads its SDK; what that import leaves behind is long-lived,
        so it is kept out of later garbage collections (see `runtime_memory.settle_memory`).
        """
        task = self._spawn(self.hub.start_session(options), "starting the session")
        task.add_done_callback(lambda _task: settle_memory(collect=False))
        return task

    def _on_mode_change(self, session_id: str, mode: PermissionMode) -> None:
        # The window emits bypass modes only after the person confirmed the risk.
        self._spawn(self.hub.set_mode(session_id, mode, confirmed=mode.needs_confirmation),
                    "switching the permission mode")

    # -- the approval gateway for agents started elsewhere ----------------------------

    def start_gateway(self, gateway: ApprovalGateway, token: GatewayToken) -> None:
        """Start the MCP approval gateway; a failure is shown, the app keeps running."""
        self.gateway, self.gateway_token = gateway, token

        async def start() -> None:
            from qoder_desktop.gateway.server import GatewayError

            try:
                await gateway.start()
            except (GatewayError, OSError) as exc:
                self.gateway_status = f"The approval gateway is not running: {exc}"
                self.window.show_status(self.gateway_status)
                return
            self.gateway_status = f"Approval gateway listening on {gateway.url}. {token.message}"
            log.info("approval gateway listening on %s", gateway.url)

        self._spawn(start(), "starting the approval gateway")

    def start_terminal_hooks(self, server: TerminalHookServer) -> None:
        """Take terminal agents' prompts (their PermissionRequest hook); failures are shown."""
        self.terminal_hooks = server

        async def start() -> None:
            from qoder_desktop.terminal.server import TerminalServerError

            try:
                await server.start()
            except TerminalServerError as exc:
                self.window.show_status(str(exc))

        self._spawn(start(), "taking terminal prompts")

    async def _refresh_hooks(self, dialog: SettingsDialog) -> None:
        from qoder_desktop.terminal.install import Agent, status

        for agent in Agent:
            found = await asyncio.to_thread(status, agent)
            dialog.set_hook_status(agent.value, found.describe(), found.installed)

    async def _change_hook(self, dialog: SettingsDialog, agent_name: str, add: bool) -> None:
        from qoder_desktop.terminal.install import Agent, InstallError, install, uninstall

        agent = Agent(agent_name)
        try:
            await asyncio.to_thread(install if add else uninstall, agent)
        except InstallError as exc:
            self.window.show_status(f"{agent.label}: {exc}")
            dialog.set_hook_error(agent.value, str(exc))
            return
        self.window.show_status(f"{agent.label}: the terminal hook is "
                                f"{'installed' if add else 'removed'}.")
        await self._refresh_hooks(dialog)

    def open_connect_dialog(self) -> None:
        """Show the flags and MCP config that send a terminal agent's approvals here."""
        if self.connect_dialog is not None:
            self.connect_dialog.raise_()
            return
        gateway, token = self.gateway, self.gateway_token
        url = gateway.url if gateway is not None and gateway.running else gateway_url(
            self.settings.gateway_port)
        dialog = ConnectAgentDialog(self.gateway_status, client_snippets(url),
                                    lambda: client_snippets(url, token), self.window)
        dialog.finished.connect(lambda _code: setattr(self, "connect_dialog", None))
        self.connect_dialog = dialog
        dialog.show()

    # -- settings --------------------------------------------------------------------

    def open_settings(self) -> None:
        """Show the settings dialog (non-modal); keyring checks run off the GUI thread."""
        if self.settings_dialog is not None:
            self.settings_dialog.raise_()
            return
        dialog = SettingsDialog(self.settings, self.window)
        dialog.settings_saved.connect(self._save_settings)
        dialog.secret_entered.connect(
            lambda name, value: self._spawn(self._store_secret(name, value), "saving the secret"))
        dialog.hook_install_requested.connect(lambda agent: self._spawn(
            self._change_hook(dialog, agent, True), "installing the terminal hook"))
        dialog.hook_uninstall_requested.connect(lambda agent: self._spawn(
            self._change_hook(dialog, agent, False), "removing the terminal hook"))
        dialog.finished.connect(lambda _code: setattr(self, "settings_dialog", None))
        self.settings_dialog = dialog
        dialog.open()
        self._spawn(self._refresh_keyring(dialog), "checking the keyring")
        self._spawn(self._refresh_hooks(dialog), "checking the terminal hooks")

    async def _refresh_keyring(self, dialog: SettingsDialog) -> None:
        status = await keyring_call(self.secrets.check_backend, "check the keyring")
        dialog.set_keyring_status(status)
        for name in SecretName:
            stored = await keyring_call(functools.partial(self.secrets.get, name),
                                        f"read the {name.label}")
            dialog.set_secret_stored(name, stored is not None)

    async def _store_secret(self, name: str, value: str) -> None:
        secret = SecretName(name)
        await keyring_call(lambda: self.secrets.set(secret, value), f"save the {secret.label}")
        if self.settings_dialog is not None:
            self.settings_dialog.set_secret_stored(name, True)
        self.window.show_status(f"{SecretName(name).label} saved in the keyring.")

    def _save_settings(self, settings: Settings) -> None:
        save_settings(settings, self._settings_path)
        self.settings = settings
        self.window.show_status("Settings saved.")

    # -- life cycle ------------------------------------------------------------------

    def show(self) -> None:
        """Show the main window."""
        self.window.show()

    def quit(self) -> None:
        """Stop every session, close the views and stop the event loop."""
        self._spawn(self._shutdown(), "quitting")

    async def _shutdown(self) -> None:
        self.dialogs.close_all()
        if self.gateway is not None and self.gateway.running:
            await self.gateway.stop()
        if self.terminal_hooks is not None:
            await self.terminal_hooks.stop()
        await self.hub.stop_all()
        self._unsubscribe_hub()
        self.bridge.unsubscribe()
        self.tray.dispose()
        self.window.set_quitting()
        self.window.close()
        app = QApplication.instance()
        if app is not None:
            app.quit()
