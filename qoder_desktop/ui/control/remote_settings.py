"""Settings → Remote hosts: the page's intents run with the same code as ``qoder-desktop
remote add|remove|status`` (`remote.actions`, `remote.overview`), every ``ssh`` and
keyring call off the GUI thread; the page is told each step and each result."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import shiboken6

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.ui.control.tasks import Tasks

if TYPE_CHECKING:  # the remote package and the page load when the page is first shown
    from qoder_desktop.remote.hosts import HostRegistry, RemoteHost
    from qoder_desktop.ui.windows.remote_hosts_page import RemoteHostsPage

FORGET_HINT = "choose Forget to forget it here anyway"
"""How a person forgets a host that cannot be reached, on the page."""


def _default_registry() -> HostRegistry:
    from qoder_desktop.remote.hosts import HostRegistry

    return HostRegistry.default()


class LiveTunnels(Protocol):
    """The running app's hosts: what serves each host and keeps its tunnel
    (`RemoteHostsControl`)."""

    def tunnel_line(self, name: str) -> str | None:
        """Host `name`'s tunnel now, or None when the app keeps no tunnels (yet)."""

    async def synced(self) -> None:
        """Serve the hosts the list names now (one just added starts, one just removed
        stops); returns once that is done."""


class RemoteHostsSettings:
    """Lists, checks, adds and removes remote hosts for the settings page; a host added
    here is served and its tunnel started at once, a host removed here is stopped.

    Args:
        secrets: where each host's token is kept (the keyring).
        tasks: runs the page's work in the background and reports what fails.
        registry: the hosts list (the user's own when None).
        tunnels: the running app's hosts and tunnels (None: only the state file of
            ``remote status`` tells how a tunnel stands).
    """

    def __init__(self, secrets: SecretStore, tasks: Tasks,
                 registry: Callable[[], HostRegistry] = _default_registry,
                 tunnels: LiveTunnels | None = None) -> None:
        self._secrets = secrets
        self._tasks = tasks
        self._registry = registry
        self._tunnels = tunnels
        self.page: RemoteHostsPage | None = None

    def _live_page(self) -> RemoteHostsPage | None:
        """The page, while it still exists (the dialog may have been closed meanwhile)."""
        page = self.page
        return page if page is not None and shiboken6.isValid(page) else None

    def _on_gui(self) -> Callable[[Callable[[str], None]], Callable[[str], None]]:
        """Wrap a page method so a worker thread can call it: it runs on the loop."""
        loop = asyncio.get_running_loop()

        def wrap(method: Callable[[str], None]) -> Callable[[str], None]:
            def call(text: str) -> None:
                loop.call_soon_threadsafe(method, text)

            return call

        return wrap

    # -- the page's intents --------------------------------------------------------------

    def show(self, page: RemoteHostsPage) -> asyncio.Task[None]:
        """List the hosts on `page` and check each (in the background)."""
        self.page = page
        return self._tasks.spawn(self.refresh(), "checking the remote hosts")

    def add(self, destination: str, ssh_config: str) -> asyncio.Task[None]:
        """Add `destination` as ``remote add`` does (`ssh_config` "": the person's own)."""
        return self._tasks.spawn(self._add(destination, ssh_config or None),
                                 "adding the remote host")

    def remove(self, name: str, forget: bool) -> asyncio.Task[None]:
        """Take the hook off host `name` and forget it, as ``remote remove`` does."""
        return self._tasks.spawn(self._remove(name, forget), "removing the remote host")

    def check(self, name: str) -> asyncio.Task[None]:
        """Check host `name` again, as ``remote status`` does."""
        return self._tasks.spawn(self._check_named(name), "checking the remote host")

    def tunnel_changed(self, name: str) -> None:
        """Host `name`'s tunnel changed: its card shows the new state and which way in is
        in use."""
        page = self._live_page()
        line = self._tunnels.tunnel_line(name) if self._tunnels is not None else None
        if page is not None and line is not None:
            from qoder_desktop.remote.overview import forward_in_use

            page.show_tunnel(name, line, forward_in_use(line))

    # -- the work ------------------------------------------------------------------------

    def _tunnel_line(self, host: RemoteHost) -> str:
        """How `host`'s tunnel stands: the running app's own state, else the state file
        (another app's, or none)."""
        from qoder_desktop.remote.tunnel_state import describe_tunnel

        line = self._tunnels.tunnel_line(host.name) if self._tunnels is not None else None
        return line if line is not None else describe_tunnel(host)

    async def refresh(self) -> None:
        """List the hosts this desk knows, then check them all at once."""
        from qoder_desktop.remote.hosts import RemoteError
        from qoder_desktop.remote.overview import forward_in_use, forward_line, remembered_hook
        from qoder_desktop.ui.windows.remote_hosts_page import HostRow

        try:
            hosts = await asyncio.to_thread(lambda: self._registry().hosts())
        except RemoteError as exc:
            if page := self._live_page():
                page.show_notice(str(exc))
            return
        lines = {host.name: self._tunnel_line(host) for host in hosts}
        rows = [HostRow(host.name, host.python, remembered_hook(host), forward_line(host),
                        forward_in_use(lines[host.name]), lines[host.name]) for host in hosts]
        page = self._live_page()
        if page is None:
            return
        page.show_hosts(rows)
        await asyncio.gather(*(self._check(host) for host in hosts))

    async def _check(self, host: RemoteHost) -> None:
        from qoder_desktop.remote.overview import check_host
        from qoder_desktop.ui.windows.remote_hosts_page import CHECKING_TEXT

        if page := self._live_page():
            page.set_host_busy(host.name, CHECKING_TEXT)
        found = await asyncio.to_thread(check_host, host)
        # The tunnel may have changed while ssh checked: show how it stands now.
        found = dataclasses.replace(found, tunnel=self._tunnel_line(host))
        if page := self._live_page():
            page.show_check(found)

    async def _check_named(self, name: str) -> None:
        from qoder_desktop.remote.hosts import RemoteError

        try:
            host = await asyncio.to_thread(lambda: self._registry().get(name))
        except RemoteError as exc:
            if page := self._live_page():
                page.host_failed(name, [str(exc)])
            return
        if host is None:
            await self.refresh()
        else:
            await self._check(host)

    async def _add(self, destination: str, ssh_config: str | None) -> None:
        from qoder_desktop.remote.actions import Report, add_host
        from qoder_desktop.remote.hosts import RemoteError

        page = self._live_page()
        progress = self._on_gui()(page.set_add_progress) if page else (lambda _step: None)
        try:
            report = await asyncio.to_thread(
                lambda: add_host(destination, store=self._secrets, registry=self._registry(),
                                 ssh_config=ssh_config, progress=progress))
        except RemoteError as exc:  # the host list could not be read or written
            report = Report().fail(str(exc))
        if report.ok and self._tunnels is not None:
            await self._tunnels.synced()  # its tunnel starts while the page shows it
        if page := self._live_page():
            page.add_finished(report.ok, report.lines)
        if report.ok:
            await self.refresh()

    async def _remove(self, name: str, forget: bool) -> None:
        from qoder_desktop.remote.actions import Report, remove_host
        from qoder_desktop.remote.hosts import RemoteError

        page = self._live_page()
        if page is not None:
            page.set_host_busy(name, f"Taking the hook off {name}…")
        progress = self._on_gui()(
            lambda step: p.set_host_busy(name, step) if (p := self._live_page()) else None)
        try:
            report = await asyncio.to_thread(
                lambda: remove_host(name, store=self._secrets, registry=self._registry(),
                                    forget=forget, forget_hint=FORGET_HINT,
                                    progress=progress))
        except RemoteError as exc:  # the host list could not be read or written
            report = Report().fail(str(exc))
        if report.ok and self._tunnels is not None:
            await self._tunnels.synced()  # its tunnel ends
        page = self._live_page()
        if page is None:
            return
        if not report.ok:
            page.remove_failed(name, report.lines, report.forget_offered)
            return
        page.show_notice("\n".join(report.lines))
        await self.refresh()
