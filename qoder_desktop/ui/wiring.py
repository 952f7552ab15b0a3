"""The composition root: builds the views and their controllers and wires the signals
in one place (qutebrowser's `_connect_signals`).

`DesktopApp` owns the views (main window, tray, dialog queue), the bridge to the broker
and the controllers in `ui/control/` (sessions, approvals, the servers for outside
agents, settings and keyring). The controllers do the work; this module only connects
them, and runs the shutdown once.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QApplication

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.models import Backend, Decision
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.gateway.contract import GatewayToken, LazyGatewayToken
from qoder_desktop.ui.bridge import BrokerBridge
from qoder_desktop.ui.control.approvals import ApprovalController
from qoder_desktop.ui.control.away import AwayControl, CoreFactory
from qoder_desktop.ui.control.history import HistoryControl
from qoder_desktop.ui.control.remote_hosts import RemoteHostsControl
from qoder_desktop.ui.control.remote_settings import RemoteHostsSettings
from qoder_desktop.ui.control.servers import AgentServers
from qoder_desktop.ui.control.sessions import SessionController
from qoder_desktop.ui.control.settings import CurrentSettings, SettingsController
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.dialog_queue import DialogQueue
from qoder_desktop.ui.idle_trim import IdleTrim
from qoder_desktop.ui.notifications import RequestNotifier
from qoder_desktop.ui.scheduling import next_turn
from qoder_desktop.ui.tray import Tray
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # the gateway (and the mcp SDK) loads after the window is shown
    from qoder_desktop.gateway.server import ApprovalGateway
    from qoder_desktop.remote.serving import RemoteHooks
    from qoder_desktop.terminal.server import TerminalHookServer
    from qoder_desktop.ui.windows.connect_dialog import ConnectAgentDialog
    from qoder_desktop.ui.windows.devices_page import DevicesPage
    from qoder_desktop.ui.windows.history_window import HistoryWindow
    from qoder_desktop.ui.windows.pairing_dialog import PairingDialog
    from qoder_desktop.ui.windows.settings_dialog import SettingsDialog

log = logging.getLogger(__name__)

QUIT_DENY_MESSAGE = "Qoder Desktop was quit while this request waited for an answer; denied."


class DesktopApp:
    """The running desktop app: views, bridge, controllers and core, wired together once.

    `settings` is either the `CurrentSettings` the core already reads (the app's
    start-up builds it first), or plain `Settings` saved to `settings_path`.
    `away_core` builds Away mode's core when it is first used (None: no Away mode).
    """

    def __init__(self, broker: ApprovalBroker, hub: SessionHub, secrets: SecretStore,
                 settings: Settings | CurrentSettings, settings_path: Path | str | None = None,
                 *, demo_scenarios: list[str] | None = None,
                 window: MainWindow | None = None,
                 ledger_path: Path | None = None,
                 away_core: CoreFactory | None = None) -> None:
        if isinstance(settings, Settings):
            if settings_path is None:
                raise ValueError("plain Settings need the file they are saved to")
            settings = CurrentSettings(settings, settings_path)
        self.broker = broker
        self.hub = hub
        self.secrets = secrets
        self.current_settings = settings
        # `run_gui` builds (and paints) the window before the core exists.
        self.window = window if window is not None else MainWindow(scenarios=demo_scenarios)
        if window is not None and demo_scenarios is not None:
            window.set_demo_scenarios(demo_scenarios)
        self.tasks = Tasks(self.window.show_status)
        self.bridge = BrokerBridge(broker)
        self.dialogs = DialogQueue(None)
        self.idle_trim = IdleTrim(self.bridge)
        self.tray = Tray(self.window)
        tray_available = Tray.is_available()
        log.info("system tray available: %s", tray_available)
        self.notifier = RequestNotifier(self.window)
        self.sessions = SessionController(hub, self.window, self.tasks)
        self.approvals = ApprovalController(self.bridge, self.dialogs, self.window, self.tray,
                                            self.notifier, settings,
                                            tray_available=tray_available, tasks=self.tasks)
        self.servers = AgentServers(settings, self.window, self.tasks, secrets)
        self.remote_hosts = RemoteHostsControl(self.window, self.tray, self.tasks, secrets)
        self.settings_control = SettingsController(settings, secrets, self.window, self.tasks)
        self.remote_settings = RemoteHostsSettings(secrets, self.tasks,
                                                   tunnels=self.remote_hosts)
        self.history = HistoryControl(ledger_path)
        self.away = AwayControl(self.window, self.tray, self.tasks, settings, away_core,
                                open_devices=self.open_devices_page)
        self._shutdown_task: asyncio.Task[Any] | None = None
        self._connect_signals()
        current = settings.value
        self.window.set_tray_available(self.tray_available)
        self.window.set_new_session_defaults(SessionOptions(
            backend=current.default_backend, permission_mode=current.default_permission_mode,
            model=current.default_model, allowed_tools=list(current.default_allowed_tools),
            disallowed_tools=list(current.default_disallowed_tools)))
        if self.tray_available:
            self.tray.show()

    def _connect_signals(self) -> None:
        window, tray, bridge, dialogs = self.window, self.tray, self.bridge, self.dialogs
        sessions, approvals = self.sessions, self.approvals
        bridge.pending_changed.connect(dialogs.set_pending)
        bridge.pending_changed.connect(self.idle_trim.pending_changed)
        bridge.views_pending_changed.connect(approvals.show_pending)
        bridge.approval_added.connect(approvals.approval_added)
        bridge.unrecorded.connect(approvals.unrecorded)
        bridge.recorded_late.connect(approvals.recorded_late)
        dialogs.dialog_opened.connect(approvals.dialog_opened)
        dialogs.build_failed.connect(approvals.build_failed)
        window.new_session_requested.connect(sessions.start)
        window.prompt_requested.connect(sessions.send)
        window.interrupt_requested.connect(sessions.interrupt)
        window.stop_requested.connect(sessions.stop)
        window.mode_change_requested.connect(sessions.change_mode)
        window.revoke_requested.connect(sessions.revoke)
        window.open_request_requested.connect(dialogs.open)
        window.session_selected.connect(sessions.show_session)
        window.settings_requested.connect(self.open_settings)
        window.history_requested.connect(self.history.open)
        self.history.on_window = self._connect_history
        window.connect_agent_requested.connect(self.servers.open_connect_dialog)
        window.quit_requested.connect(self.quit)
        window.visibility_changed.connect(tray.set_window_visible)
        tray.open_request.connect(approvals.open_from_tray)
        tray.activate_window.connect(window.bring_to_front)
        tray.toggle_window.connect(self._toggle_window)
        tray.open_history.connect(self.history.open)
        tray.quit_requested.connect(window.request_quit)  # asks first while requests wait
        notifier = self.notifier  # notification buttons answer through the dialogs' path
        notifier.decided.connect(approvals.decided)
        notifier.open_request.connect(approvals.open_from_tray)
        notifier.fall_back.connect(approvals.balloon)
        notifier.ignored.connect(window.show_status)
        self.remote_hosts.on_change = self.remote_settings.tunnel_changed
        away = self.away  # the desk sees the person: an answer here, the tray icon
        tray.away_toggled.connect(away.set_on)
        tray.activate_window.connect(away.person_seen)
        notifier.decided.connect(away.person_seen)
        # (a lambda per dialog, not the bound method: PySide6 keeps a weak reference for
        # every bound method of a plain object connected, for good, one per dialog)
        dialogs.dialog_opened.connect(
            lambda dialog: dialog.decided.connect(lambda *_: away.person_seen()))
        away.on_pairing_dialog = self._connect_pairing

    def _connect_pairing(self, dialog: PairingDialog) -> None:
        dialog.confirmed.connect(self.away.confirm_pairing)
        dialog.refused.connect(self.away.refuse_pairing)

    def _connect_history(self, history: HistoryWindow) -> None:
        # Revoke from a history row takes the rules pane's path (the hub revokes and
        # publishes), then the row shows the rule's new state.
        history.revoke_requested.connect(self.sessions.revoke)
        history.revoke_requested.connect(self.history.rule_revoked)

    def start_notifications(self) -> None:
        """Look for the desktop's notification service (the tray balloon until found)."""
        async def start() -> None:
            status = await self.notifier.start()
            log.info("desktop notifications: %s", status.detail if status.available
                     else f"none, using the tray balloon ({status.detail})")

        self.tasks.spawn(start(), "looking for the notification service")

    def open_settings(self) -> None:
        """Show the settings dialog (non-modal), wired to the keyring, the hooks and the
        remote hosts."""
        dialog = self.settings_control.open()
        if dialog is not None:
            servers = self.servers
            dialog.settings_saved.connect(self.settings_control.save)
            dialog.secret_entered.connect(self.settings_control.store_secret)
            dialog.secret_removed.connect(self.settings_control.remove_secret)
            dialog.hook_install_requested.connect(
                lambda agent: servers.change_hook(dialog, agent, True))
            dialog.hook_uninstall_requested.connect(
                lambda agent: servers.change_hook(dialog, agent, False))
            servers.refresh_hooks(dialog)
            page, remote = dialog.remote_hosts_page, self.remote_settings
            page.first_shown.connect(lambda: remote.show(page))
            page.add_requested.connect(remote.add)
            page.remove_requested.connect(remote.remove)
            page.check_requested.connect(remote.check)
            self._connect_devices(dialog, dialog.devices_page)

    def _connect_devices(self, dialog: SettingsDialog, page: DevicesPage) -> None:
        away = self.away
        away.setting_up(dialog)  # (setting Away mode up is not being back at the desk)
        page.first_shown.connect(lambda: away.show(page))
        page.away_requested.connect(away.set_on)
        page.pair_requested.connect(away.pair)
        page.revoke_requested.connect(away.revoke)

    def open_devices_page(self) -> DevicesPage | None:
        """Show Settings → Devices (Away mode and the paired phones)."""
        self.open_settings()
        dialog = self.settings_dialog
        return dialog.show_devices_page() if dialog is not None else None

    def _toggle_window(self) -> None:
        if self.window.isVisible():
            self.window.hide()
        else:
            self.window.bring_to_front()

    # -- what the entry point and the tests call ---------------------------------------

    @property
    def tray_available(self) -> bool:
        """Whether the desktop has a system tray (balloons when there is no service)."""
        return self.approvals.tray_available

    @tray_available.setter
    def tray_available(self, available: bool) -> None:
        self.approvals.tray_available = available

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        return self.current_settings.value

    @property
    def settings_dialog(self) -> SettingsDialog | None:
        """The open settings dialog, if any."""
        return self.settings_control.dialog

    @property
    def connect_dialog(self) -> ConnectAgentDialog | None:
        """The open "Connect an Agent" dialog, if any."""
        return self.servers.connect_dialog

    @property
    def gateway_token(self) -> GatewayToken | None:
        """The approval gateway's token, once the gateway was started."""
        return self.servers.gateway_token

    @gateway_token.setter
    def gateway_token(self, token: GatewayToken | None) -> None:
        self.servers.gateway_token = token

    def start_session(self, options: SessionOptions) -> asyncio.Task[Any]:
        """Start a session in the background (see `SessionController.start`)."""
        return self.sessions.start(options)

    def start_gateway(self, gateway: ApprovalGateway,
                      token: GatewayToken | LazyGatewayToken) -> None:
        """Start the MCP approval gateway; a failure is shown, the app keeps running."""
        self.servers.start_gateway(gateway, token)

    def start_terminal_hooks(self, server: TerminalHookServer) -> None:
        """Take terminal agents' prompts (their PermissionRequest hook); failures are shown."""
        self.servers.start_terminal_hooks(server)

    def start_remote_hosts(self, remote: RemoteHooks) -> None:
        """Take remote hosts' prompts: each host's own socket and ssh tunnel."""
        self.remote_hosts.start(remote)

    def open_connect_dialog(self) -> None:
        """Show the flags and MCP config that send a terminal agent's approvals here."""
        self.servers.open_connect_dialog()

    # -- life cycle ------------------------------------------------------------------

    def show(self) -> None:
        """Show the main window."""
        self.window.show()

    def quit(self) -> asyncio.Task[Any]:
        """Stop every session, close the views and stop the event loop; calling it again
        while (or after) it runs returns the same shutdown."""
        if self._shutdown_task is None:
            self._shutdown_task = self.tasks.spawn(self._shutdown(), "quitting")
        return self._shutdown_task

    async def _shutdown(self) -> None:
        # Fail closed: what still waits is denied, with a message the agent sees. A
        # terminal agent's request is withdrawn instead (its own prompt takes over).
        denied = [self.bridge.answer(request.request_id, Decision.deny(QUIT_DENY_MESSAGE))
                  for request in self.broker.pending() if request.backend is not Backend.TERMINAL]
        if denied:
            await next_turn()  # the answers go out before the sessions stop
        self.dialogs.close_all()
        self.history.close()
        await self.notifier.close_all()
        await self.servers.stop()
        await self.remote_hosts.stop()
        await self.away.close()
        await self.sessions.stop_all()
        self.hub.close()
        self.bridge.unsubscribe()
        self.broker.close()
        self.tray.dispose()
        self.window.set_quitting()
        self.window.close()
        await self.tasks.close()  # e.g. a keyring check a hung keyring still holds
        app = QApplication.instance()
        if app is not None:
            app.quit()
