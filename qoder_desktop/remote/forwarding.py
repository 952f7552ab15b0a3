"""``qoder-desktop remote forward HOST [--own | --app]``: who carries a host's socket.

By default the running app keeps its own ``ssh -N -R`` to the host (`tunnel`). A person
who keeps an SSH session to the host open anyway (a terminal, VS Code Remote, mosh +
tmux) can let that session carry the forward instead: this prints the ``RemoteForward``
line for its ``Host`` entry and, with ``--own``, tells the app to keep no tunnel to the
host (``--app`` gives the tunnel back to the app); a running app follows the change.
"""

from __future__ import annotations

from dataclasses import replace

from qoder_desktop.remote.actions import Report
from qoder_desktop.remote.hosts import HostRegistry
from qoder_desktop.remote.tunnel import remote_forward_line
from qoder_desktop.remote.tunnel_state import describe_tunnel, host_socket_path


def forward_host(name: str, registry: HostRegistry, own: bool | None = None) -> Report:
    """Say (and with `own` set, change) whether the app or the person's own SSH session
    forwards host `name`'s socket, with the ``RemoteForward`` line for the latter."""
    host = registry.get(name.strip())
    if host is None:
        return Report().fail(f"{name}: not one of this desk's remote hosts (see "
                             "`qoder-desktop remote list`)")
    changed = own is not None and own != host.own_session
    if changed:
        host = replace(host, own_session=bool(own))
        registry.put(host)
    line = remote_forward_line(host.remote_socket, host_socket_path(host.name))
    keeper = ("your own SSH session (the app keeps no tunnel to it)" if host.own_session
              else "the app's ssh tunnel")
    lines = [f"{host.name}: forwarded by {keeper}",
             f"  now: {describe_tunnel(host)}",
             "  for your own SSH session, in its Host entry:",
             f"    {line}"]
    if not host.own_session:
        lines.append(f"  then `qoder-desktop remote forward {host.name} --own`, so the app "
                     "stops keeping its tunnel")
    return Report(lines=lines)
