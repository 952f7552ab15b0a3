"""Settings → Remote hosts: the page's intents run with the same code as ``qoder-desktop
remote add|remove|status`` (`remote.actions`, `remote.overview`), every ``ssh`` and
keyring call off the GUI thread; the page is told each step and each result."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6

from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.windows.remote_hosts_page import CHECKING_TEXT, HostRow, RemoteHostsPage

if TYPE_CHECKING:  # the remote package loads when the page is first shown
    from qoder_desktop.remote.hosts import HostRegistry, RemoteHost

FORGET_HINT = "choose Forget to forget it here anyway"
"""How a person forgets a host that cannot be reached, on the page."""


def _default_registry() -> HostRegistry:
    from qoder_desktop.remote.hosts import HostRegistry

    return HostRegistry.default()


class RemoteHostsSettings:
    """Lists, checks, adds and removes remote hosts for the settings page.

    Args:
        secrets: where each host's token is kept (the keyring).
        tasks: runs the page's work in the background and reports what fails.
        registry: the hosts list (the user's own when None).
    """

    def __init__(self, secrets: SecretStore, tasks: Tasks,
                 registry: Callable[[], HostRegistry] = _default_registry) -> None:
        self._secrets = secrets
        self._tasks = tasks
        self._registry = registry
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

    # -- the work ------------------------------------------------------------------------

    async def refresh(self) -> None:
        """List the hosts this desk knows, then check them all at once."""
        from qoder_desktop.remote.hosts import RemoteError
        from qoder_desktop.remote.overview import forward_in_use, forward_line, remembered_hook
        from qoder_desktop.remote.tunnel_state import describe_tunnel

        def known() -> tuple[list[RemoteHost], list[HostRow]]:
            hosts = self._registry().hosts()
            return hosts, [HostRow(host.name, host.python, remembered_hook(host),
                                   forward_line(host), forward_in_use(describe_tunnel(host)))
                           for host in hosts]

        try:
            hosts, rows = await asyncio.to_thread(known)
        except RemoteError as exc:
            if page := self._live_page():
                page.show_notice(str(exc))
            return
        page = self._live_page()
        if page is None:
            return
        page.show_hosts(rows)
        await asyncio.gather(*(self._check(host) for host in hosts))

    async def _check(self, host: RemoteHost) -> None:
        from qoder_desktop.remote.overview import check_host

        if page := self._live_page():
            page.set_host_busy(host.name, CHECKING_TEXT)
        found = await asyncio.to_thread(check_host, host)
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
        page = self._live_page()
        if page is None:
            return
        if not report.ok:
            page.remove_failed(name, report.lines, report.forget_offered)
            return
        page.show_notice("\n".join(report.lines))
        await self.refresh()
