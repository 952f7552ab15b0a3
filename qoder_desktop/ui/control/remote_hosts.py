"""The remote hosts while the app runs: each host's socket and tunnel (`remote.serving`)
started with the app and stopped with it, their states shown in the main window's status
bar and in the tray ("box: connected", "box: reconnecting — host unreachable")."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.tray import Tray
from qoder_desktop.ui.widgets.remote_hosts import RemoteHostsLabel
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # the remote package loads with the terminal hook server, after paint
    from qoder_desktop.remote.hosts import RemoteHost
    from qoder_desktop.remote.serving import RemoteHooks
    from qoder_desktop.remote.tunnel import TunnelStatus

log = logging.getLogger(__name__)


class RemoteHostsControl:
    """Starts the remote hosts' hook servers and tunnels and shows how they stand; a host
    added or removed in Settings → Remote hosts is served or stopped at once (`serve`,
    `forget`)."""

    def __init__(self, window: MainWindow, tray: Tray, tasks: Tasks,
                 secrets: SecretStore) -> None:
        self._window = window
        self._tray = tray
        self._tasks = tasks
        self._secrets = secrets
        self.label = RemoteHostsLabel(window)
        window.add_status_widget(self.label)
        self.remote: RemoteHooks | None = None
        self.on_change: Callable[[str], None] | None = None
        """Told the name of a host whose tunnel changed (or that was served or stopped)."""

    def tunnel_line(self, name: str) -> str | None:
        """Host `name`'s tunnel as the running app keeps it (``connected``,
        ``reconnecting — why``), or None when the app's remote hosts are not started."""
        remote = self.remote
        if remote is None:
            return None
        from qoder_desktop.remote.tunnel_state import NOT_KEPT

        found = next((status for status in remote.statuses() if status.host == name), None)
        return found.line if found is not None else NOT_KEPT

    async def serve(self, host: RemoteHost) -> str | None:
        """Serve `host` (just added): its socket and, unless the person keeps their own
        SSH session, its tunnel; returns why it could not be served, or None."""
        remote = self.remote
        if remote is None:
            return None  # the app's start serves every host on the list
        from qoder_desktop.remote.hosts import RemoteError
        from qoder_desktop.remote.serving import host_endpoint
        from qoder_desktop.terminal.server import TerminalServerError

        try:
            endpoint = await asyncio.to_thread(host_endpoint, host, self._secrets)
            await remote.add(endpoint)
        except (RemoteError, TerminalServerError) as exc:
            log.warning("remote hosts: %s is not served: %s", host.name, exc)
            return f"{host.name}: not served: {exc}"
        finally:
            self._changed(host.name)
        return None

    async def forget(self, name: str) -> None:
        """Stop serving host `name` (removed): its tunnel ends, its socket goes."""
        remote = self.remote
        if remote is not None:
            await remote.remove(name)
            self._changed(name)

    def start(self, remote: RemoteHooks) -> None:
        """Serve every host `remote add` deployed to, in the background."""
        self.remote = remote
        remote.on_status = self._on_status
        self._tasks.spawn(self._start(remote), "connecting the remote hosts")

    async def _start(self, remote: RemoteHooks) -> None:
        from qoder_desktop.remote.hosts import HostRegistry
        from qoder_desktop.remote.serving import registered_endpoints

        endpoints, problems = await asyncio.to_thread(
            lambda: registered_endpoints(HostRegistry.default(), self._secrets))
        problems += await remote.start(endpoints)
        for problem in problems:
            log.warning("remote hosts: %s", problem)
        if problems:
            self._window.show_status("Remote hosts: " + "; ".join(problems))
        self._show()

    async def stop(self) -> None:
        """End every tunnel (no ssh outlives the app) and stop the hosts' sockets."""
        remote, self.remote = self.remote, None
        if remote is not None:
            await remote.stop()

    def _on_status(self, status: TunnelStatus) -> None:
        self._changed(status.host)

    def _changed(self, name: str) -> None:
        self._show()
        if self.on_change is not None:
            self.on_change(name)

    def _show(self) -> None:
        remote = self.remote
        if remote is None:
            return
        states = [status.describe() for status in remote.statuses()]
        self.label.set_hosts(states, [remote.forward_line(name) for name in remote.servers])
        self._tray.set_remote_hosts(states)
