"""The remote hosts while the app runs: each host's socket and tunnel (`remote.serving`)
started with the app and stopped with it, their states shown in the main window's status
bar and in the tray ("box: connected", "box: reconnecting — host unreachable").

The host list is watched (its folder, with `QFileSystemWatcher`): a host that ``remote
add`` adds, ``remote remove`` removes or ``remote forward`` changes while the app runs is
served, stopped or served anew at once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QFileSystemWatcher

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.tray import Tray
from qoder_desktop.ui.widgets.remote_hosts import RemoteHostsLabel
from qoder_desktop.ui.windows.main_window import MainWindow

if TYPE_CHECKING:  # the remote package loads with the terminal hook server, after paint
    from qoder_desktop.remote.serving import RemoteEndpoint, RemoteHooks
    from qoder_desktop.remote.tunnel import TunnelStatus

log = logging.getLogger(__name__)


class RemoteHostsControl:
    """Starts the remote hosts' hook servers and tunnels, follows the host list, and
    shows how they stand (the status bar, the tray, and via `on_change` Settings →
    Remote hosts)."""

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
        """Told the name of a host whose tunnel changed."""
        self._watcher: QFileSystemWatcher | None = None
        self._syncing: asyncio.Task[None] | None = None
        self._again = False

    def tunnel_line(self, name: str) -> str | None:
        """Host `name`'s tunnel as the running app keeps it (``connected``,
        ``reconnecting — why``), or None when the app's remote hosts are not started."""
        remote = self.remote
        if remote is None:
            return None
        from qoder_desktop.remote.tunnel_state import NOT_KEPT

        found = next((status for status in remote.statuses() if status.host == name), None)
        return found.line if found is not None else NOT_KEPT

    async def synced(self) -> None:
        """Serve the hosts the list names now and return once they are (Settings →
        Remote hosts calls it after an add or a remove, without waiting for the folder
        watcher to notice)."""
        if self.remote is None:
            return
        self.refresh()
        while (syncing := self._syncing) is not None and not syncing.done():
            await asyncio.wait({syncing})

    def start(self, remote: RemoteHooks) -> None:
        """Serve every host `remote add` deployed to, in the background, and follow
        changes to the host list."""
        from qoder_desktop.remote.hosts import HostRegistry

        self.remote = remote
        remote.on_status = self._on_status
        folder = HostRegistry.default().path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            log.warning("remote hosts: changes to the host list are not followed: %s", exc)
        else:
            self._watcher = QFileSystemWatcher([str(folder)])
            self._watcher.directoryChanged.connect(lambda _path: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        """Serve the hosts the list names now (once more after a run in progress)."""
        if self.remote is None:
            return
        if self._syncing is not None and not self._syncing.done():
            self._again = True
            return
        self._syncing = self._tasks.spawn(self._sync(self.remote), "connecting the remote hosts")

    async def _sync(self, remote: RemoteHooks) -> None:
        while True:
            self._again = False
            endpoints, problems = await self._endpoints()
            if self.remote is not remote:
                return
            problems += await remote.sync(endpoints)
            for problem in problems:
                log.warning("remote hosts: %s", problem)
            if problems:
                self._window.show_status("Remote hosts: " + "; ".join(problems))
            self._show()
            if not self._again:
                return

    async def _endpoints(self) -> tuple[list[RemoteEndpoint], list[str]]:
        """The listed hosts with their tokens (read on the app's one keyring thread, with
        its timeout, and only when a host is listed), and what keeps any from being
        served."""
        from qoder_desktop.config.keyring_calls import KeyringTimeout, keyring_call
        from qoder_desktop.remote.hosts import HostRegistry, RemoteError
        from qoder_desktop.remote.serving import endpoints_of

        try:
            hosts = await asyncio.to_thread(HostRegistry.default().hosts)
        except RemoteError as exc:
            return [], [str(exc)]
        if not hosts:
            return [], []
        try:
            return await keyring_call(lambda: endpoints_of(hosts, self._secrets),
                                      "read the remote hosts' tokens")
        except KeyringTimeout as exc:
            return [], [str(exc)]

    async def stop(self) -> None:
        """End every tunnel (no ssh outlives the app) and stop the hosts' sockets."""
        remote, self.remote = self.remote, None
        if self._watcher is not None:
            self._watcher.deleteLater()
            self._watcher = None
        syncing = self._syncing
        if syncing is not None and not syncing.done():
            await asyncio.wait({syncing})
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
