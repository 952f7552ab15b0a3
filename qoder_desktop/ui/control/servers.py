"""The servers for agents started elsewhere: the MCP approval gateway and the terminal
hook server (start, stop, the "Connect an Agent" dialog, installing the hook)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.gateway.contract import (
    GatewayToken,
    LazyGatewayToken,
    client_snippets,
    gateway_url,
)
from qoder_desktop.ui.control.settings import CurrentSettings
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # the gateway (with mcp) after the window shows, the dialogs when opened
    from qoder_desktop.gateway.server import ApprovalGateway
    from qoder_desktop.terminal.server import TerminalHookServer
    from qoder_desktop.ui.windows.connect_dialog import ConnectAgentDialog
    from qoder_desktop.ui.windows.settings_dialog import SettingsDialog

log = logging.getLogger(__name__)


class AgentServers:
    """Life cycle of the approval gateway and the terminal hook server; a failure to
    start is shown and the app keeps running."""

    def __init__(self, current: CurrentSettings, window: MainWindow, tasks: Tasks,
                 secrets: SecretStore) -> None:
        self._current = current
        self._secrets = secrets
        self._window = window
        self._tasks = tasks
        self.gateway: ApprovalGateway | None = None
        self._token: LazyGatewayToken | None = None
        self.gateway_status = "The approval gateway is not running."
        self.terminal_hooks: TerminalHookServer | None = None
        self.squat_warning: QMessageBox | None = None
        """The warning shown when something else holds the gateway's port."""
        self.connect_dialog: ConnectAgentDialog | None = None

    @property
    def gateway_token(self) -> GatewayToken | None:
        """The approval gateway's token, once it has been read (it is read when first
        needed: an agent's first connection, the "Connect an Agent" dialog)."""
        return self._token.value if self._token is not None else None

    @gateway_token.setter
    def gateway_token(self, token: GatewayToken | None) -> None:
        if self._token is None:
            self._token = LazyGatewayToken.of(token) if token is not None else None
        else:
            self._token.value = token

    def start_gateway(self, gateway: ApprovalGateway,
                      token: GatewayToken | LazyGatewayToken) -> None:
        """Start the MCP approval gateway in the background."""
        lazy = token if isinstance(token, LazyGatewayToken) else LazyGatewayToken.of(token)
        self.gateway, self._token = gateway, lazy

        async def start() -> None:
            from qoder_desktop.gateway.server import GatewayError, GatewayPortSquatted

            try:
                await gateway.start(on_failure=self._gateway_failed)
            except GatewayPortSquatted as exc:
                await self._after_squatting(str(exc))
                return
            except (GatewayError, OSError) as exc:
                self.gateway_status = f"The approval gateway is not running: {exc}"
                self._window.show_status(self.gateway_status)
                return
            self.gateway_status = self._listening_status(gateway)
            log.info("approval gateway listening on %s", gateway.url)

        self._tasks.spawn(start(), "starting the approval gateway")

    def _gateway_failed(self, error: Exception) -> None:
        """The gateway's server could not start when an agent connected: it is closed."""
        self.gateway_status = str(error)
        self._window.show_status(self.gateway_status)

    async def _after_squatting(self, warning: str) -> None:
        """Someone else holds the gateway's port: replace the token where it can be,
        say exactly what the person must do where it cannot, warn loudly."""
        from qoder_desktop.gateway.contract import rotate_after_squatting

        try:
            rotation = await asyncio.to_thread(
                rotate_after_squatting, self._secrets, redactor=self._secrets.redactor)
        except Exception as exc:  # the warning matters more than the rotation's failure
            log.exception("could not replace the gateway token")
            warning += (f"\n\nThe gateway token could not be replaced "
                        f"({type(exc).__name__}): treat it as leaked. Remove it from the OS "
                        "keyring (or set a new QODER_DESKTOP_GATEWAY_TOKEN), restart Qoder "
                        "Desktop and set up your agents again with the new token.")
        else:
            self.gateway_token = rotation.token
            warning += "\n\n" + rotation.advice
        self.gateway_status = warning
        self._window.show_status(warning.split(". ", 1)[0] + ".")
        box = QMessageBox(QMessageBox.Icon.Warning, "Qoder Desktop — gateway port taken",
                          "", parent=self._window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(warning)
        self.squat_warning = box
        box.open()

    def start_terminal_hooks(self, server: TerminalHookServer) -> None:
        """Take terminal agents' prompts (their PermissionRequest hook) in the background."""
        self.terminal_hooks = server

        async def start() -> None:
            from qoder_desktop.terminal.server import TerminalServerError

            try:
                await server.start()
            except TerminalServerError as exc:
                log.warning("terminal hooks: not started: %s", exc)
                self._window.show_status(str(exc))

        self._tasks.spawn(start(), "taking terminal prompts")

    async def stop(self) -> None:
        """Stop both servers (their pending requests are withdrawn); idempotent."""
        if self.gateway is not None:
            await self.gateway.stop()
        if self.terminal_hooks is not None:
            hooks, self.terminal_hooks = self.terminal_hooks, None
            await hooks.stop()

    def open_connect_dialog(self) -> None:
        """Show the flags and MCP config that send a terminal agent's approvals here
        (the gateway's token read first, if it was not yet)."""
        if self.connect_dialog is not None:
            self.connect_dialog.raise_()
            return
        lazy = self._token
        if lazy is not None and lazy.value is None:
            self._tasks.spawn(self._read_token_then_connect(lazy),
                              "reading the approval gateway's token")
            return
        self._show_connect_dialog()

    def token_read(self) -> None:
        """The gateway's token was read: say where it is kept, while the gateway runs."""
        gateway = self.gateway
        if gateway is not None and gateway.running:
            self.gateway_status = self._listening_status(gateway)

    def _listening_status(self, gateway: ApprovalGateway) -> str:
        """Where the running gateway listens, and where its token is kept once read."""
        token = self.gateway_token
        kept = (token.message if token is not None else
                "Its token is read from the OS keyring when an agent first connects.")
        return f"Approval gateway listening on {gateway.url}. {kept}"

    async def _read_token_then_connect(self, lazy: LazyGatewayToken) -> None:
        try:
            await lazy.ensure()
        except Exception as exc:  # the dialog still shows; its copy has no token
            log.warning("the gateway token could not be read: %s", type(exc).__name__)
            self._window.show_status(f"The approval gateway's token could not be read: {exc}")
        if self.connect_dialog is None:
            self._show_connect_dialog()

    def _show_connect_dialog(self) -> None:
        gateway, token = self.gateway, self.gateway_token
        url = gateway.url if gateway is not None and gateway.running else gateway_url(
            self._current.value.gateway_port)
        from qoder_desktop.ui.windows.connect_dialog import ConnectAgentDialog

        dialog = ConnectAgentDialog(self.gateway_status, client_snippets(url),
                                    lambda: client_snippets(url, token), self._window)
        dialog.finished.connect(lambda _code: setattr(self, "connect_dialog", None))
        self.connect_dialog = dialog
        dialog.show()

    # -- the terminal hook, from the settings dialog ------------------------------------

    def refresh_hooks(self, dialog: SettingsDialog) -> None:
        """Show each agent's hook status in `dialog` (checked off the GUI thread)."""
        check = self._tasks.spawn(self._refresh_hooks(dialog), "checking the terminal hooks")
        dialog.finished.connect(lambda _code: check.cancel())  # (it only fills `dialog`)

    def change_hook(self, dialog: SettingsDialog, agent: str, add: bool) -> None:
        """Install (`add`) or remove an agent's terminal hook, then show its status."""
        self._tasks.spawn(self._change_hook(dialog, agent, add),
                          "installing the terminal hook" if add else "removing the terminal hook")

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
            self._window.show_status(f"{agent.label}: {exc}")
            dialog.set_hook_error(agent.value, str(exc))
            return
        self._window.show_status(f"{agent.label}: the terminal hook is "
                                 f"{'installed' if add else 'removed'}.")
        await self._refresh_hooks(dialog)
