"""The desk side of remote hosts: each host is its own way in.

Every host gets its own Unix socket on the desk (``<runtime>/hosts/<digest>.sock``, in a
0700 folder, the socket 0600), served by a `TerminalHookServer` of its own that holds
that host's token (the same mutual challenge as local hooks; the token was written to
the host's private folder at deploy and is kept here in the keyring), and its own
`Tunnel` that forwards the host's ``~/.qoder-desktop/desk.sock`` to that socket. So the
desk knows which host a request came from by the socket it arrived on, never by what
the request says: a host's hook cannot reach another host's socket or the local one,
and since all hook servers share one set of session bindings (each binding keeps its
host), a session id a host claims that belongs to another host or to a local terminal
becomes a new session of the claiming host.

Qt-free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.remote.hosts import HostRegistry, RemoteError, RemoteHost, host_token
from qoder_desktop.remote.layout import REMOTE_FOLDER, SOCKET_NAME
from qoder_desktop.remote.tunnel import (
    Tunnel,
    TunnelSettings,
    TunnelState,
    TunnelStatus,
    remote_forward_line,
)
from qoder_desktop.remote.tunnel_state import clear_states, host_socket_path, write_states
from qoder_desktop.terminal.binding import SessionBindings
from qoder_desktop.terminal.server import HookOrigin, TerminalHookServer, TerminalServerError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RemoteEndpoint:
    """What the desk needs to take one host's prompts.

    Attributes:
        name: the host as the person named it (shown on every request from it).
        destination: the SSH destination ``ssh`` is given.
        token: the host's hook token (from the keyring; never logged).
        ssh_config: an ``ssh_config`` file of its own (``-F``); None: the person's.
        own_session: the person forwards the socket in an SSH session of their own
            (`forward_line`), so the app runs no tunnel for this host.
        remote_path: the socket on the host, when the deploy found its HOME.
    """

    name: str
    destination: str
    token: str = field(repr=False)
    ssh_config: Path | None = None
    own_session: bool = False
    remote_path: str | None = None


def registered_endpoints(registry: HostRegistry, store: SecretStore
                         ) -> tuple[list[RemoteEndpoint], list[str]]:
    """The hosts `remote add` deployed to, with their tokens from the keyring, and the
    problems of those that cannot be served (no token, a keyring failure)."""
    try:
        hosts = registry.hosts()
    except RemoteError as exc:
        return [], [str(exc)]
    return endpoints_of(hosts, store)


def endpoints_of(hosts: list[RemoteHost], store: SecretStore
                 ) -> tuple[list[RemoteEndpoint], list[str]]:
    """`hosts` with their tokens from the keyring, and the problems of those that cannot
    be served (no token, a keyring failure)."""
    endpoints, problems = [], []
    for host in hosts:
        try:
            endpoints.append(host_endpoint(host, store))
        except RemoteError as exc:
            problems.append(f"{host.name}: {exc}")
    return endpoints, problems


def host_endpoint(host: RemoteHost, store: SecretStore) -> RemoteEndpoint:
    """What the desk needs to serve `host` (its token from the keyring).

    Raises:
        RemoteError: the keyring failed, or holds no token for the host.
    """
    token = host_token(store, host.name)
    if token is None:
        raise RemoteError(f"its token is not in the keyring; run `qoder-desktop remote "
                          f"add {host.name}` again.")
    return RemoteEndpoint(host.name, host.name, token.reveal(),
                          ssh_config=Path(host.ssh_config) if host.ssh_config else None,
                          remote_path=host.remote_socket if host.home else None,
                          own_session=host.own_session)


class RemoteHooks:
    """Per remote host: a hook server on its own socket and, unless the person keeps
    their own SSH session, a supervised tunnel; stopped together.

    Args:
        broker: decides each request.
        hub: gives each terminal session.
        bindings: the session bindings of the local hook server (shared).
        wait_seconds: how long a person may take.
        on_status: called with each tunnel's new state (on the loop's thread).
        environ: where the runtime folder is (``os.environ`` when None).
        tunnel_settings: keep-alives and back-off of the tunnels.
    """

    def __init__(self, broker: ApprovalBroker, hub: SessionHub, *,
                 bindings: SessionBindings | None = None,
                 wait_seconds: float | Callable[[], float] = 180.0,
                 on_status: Callable[[TunnelStatus], None] | None = None,
                 environ: Mapping[str, str] | None = None,
                 tunnel_settings: TunnelSettings | None = None) -> None:
        self._broker = broker
        self._hub = hub
        self._bindings = SessionBindings() if bindings is None else bindings
        self._wait = wait_seconds
        self.on_status = on_status
        """Called with each tunnel's new state (on the loop's thread)."""
        self._environ = environ
        self._tunnel_settings = tunnel_settings
        self.servers: dict[str, TerminalHookServer] = {}
        self.tunnels: dict[str, Tunnel] = {}
        self.endpoints: dict[str, RemoteEndpoint] = {}

    async def start(self, endpoints: Iterable[RemoteEndpoint]) -> list[str]:
        """Serve each host and start its tunnel; returns the problems (one per host
        that could not be served; the others are served)."""
        problems = []
        for endpoint in endpoints:
            try:
                await self.add(endpoint)
            except TerminalServerError as exc:
                problems.append(f"{endpoint.name}: {exc}")
                log.warning("remote hosts: %s is not served: %s", endpoint.name, exc)
        return problems

    async def sync(self, endpoints: Iterable[RemoteEndpoint]) -> list[str]:
        """Serve exactly `endpoints`: new or changed hosts start (again), hosts no longer
        named stop; returns the problems, as `start` does."""
        wanted = {endpoint.name: endpoint for endpoint in endpoints}
        for name in [name for name in self.endpoints if name not in wanted]:
            await self.remove(name)
        return await self.start([endpoint for name, endpoint in wanted.items()
                                 if self.endpoints.get(name) != endpoint])

    async def add(self, endpoint: RemoteEndpoint) -> None:
        """Serve one host (replacing how it was served before).

        Raises:
            TerminalServerError: its socket could not be set up.
        """
        await self.remove(endpoint.name)
        path = host_socket_path(endpoint.name, self._environ)
        runtime = path.parent.parent
        try:
            runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise TerminalServerError(f"{runtime} could not be made: {exc}") from exc
        server = TerminalHookServer(
            self._broker, self._hub, wait_seconds=self._wait, environ=self._environ,
            follow_transcripts=False, bindings=self._bindings,
            origin=HookOrigin(endpoint.name, path, endpoint.token))
        await server.start()
        self.servers[endpoint.name] = server
        self.endpoints[endpoint.name] = endpoint
        if endpoint.own_session:
            self._publish(TunnelStatus(endpoint.name, TunnelState.OWN_SESSION))
            return
        tunnel = Tunnel(endpoint.name, endpoint.destination, path,
                        on_status=self._publish, ssh_config=endpoint.ssh_config,
                        settings=self._tunnel_settings, remote_path=endpoint.remote_path)
        self.tunnels[endpoint.name] = tunnel
        tunnel.start()

    async def remove(self, name: str) -> None:
        """Stop serving host `name` (its tunnel ends; open requests are withdrawn)."""
        tunnel = self.tunnels.pop(name, None)
        if tunnel is not None:
            await tunnel.stop()
        server = self.servers.pop(name, None)
        if server is not None:
            await server.stop()
        self.endpoints.pop(name, None)
        self._write_states()

    async def stop(self) -> None:
        """Stop every tunnel and host server; idempotent."""
        for name in list(self.servers):
            await self.remove(name)
        clear_states(self._environ)

    def statuses(self) -> list[TunnelStatus]:
        """Each served host's tunnel state, by name."""
        found = []
        for name in sorted(self.servers):
            tunnel = self.tunnels.get(name)
            endpoint = self.endpoints.get(name)
            own = endpoint is not None and endpoint.own_session
            found.append(tunnel.status if tunnel is not None else TunnelStatus(
                name, TunnelState.OWN_SESSION if own else TunnelState.STOPPED))
        return found

    def forward_line(self, name: str) -> str:
        """The ``RemoteForward`` line a person pastes into the ``Host`` entry of their
        own SSH session to host `name` (instead of the app's tunnel)."""
        tunnel = self.tunnels.get(name)
        endpoint = self.endpoints.get(name)
        remote = tunnel.remote_path if tunnel is not None and tunnel.remote_path else (
            endpoint.remote_path if endpoint is not None and endpoint.remote_path else
            f"/home/<you>/{REMOTE_FOLDER}/{SOCKET_NAME}")
        return remote_forward_line(remote, host_socket_path(name, self._environ))

    def _publish(self, status: TunnelStatus) -> None:
        self._write_states()
        if self.on_status is not None:
            self.on_status(status)

    def _write_states(self) -> None:
        """Tell `remote status` (another process) how each tunnel stands."""
        lines = {status.host: status.line for status in self.statuses()}
        try:
            write_states(lines, self._environ)
        except OSError as exc:
            log.info("remote hosts: could not write the tunnels' state: %s", exc)
