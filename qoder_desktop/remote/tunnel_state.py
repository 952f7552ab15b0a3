"""The tunnel line of ``qoder-desktop remote status``: where the desk side plugs in.

The running app keeps one ``ssh -N -R`` per host; `describe_tunnel` is what ``remote
status`` (a separate, short-lived process) shows for it. Until the app tells how its
tunnels stand, a command line cannot know, and says the tunnel runs only with the app.
"""

from __future__ import annotations

from qoder_desktop.remote.hosts import RemoteHost

NOT_RUNNING = "not running (the app is closed)"


def describe_tunnel(host: RemoteHost) -> str:
    """The state of `host`'s tunnel for people, e.g. ``connected`` or ``reconnecting —
    host unreachable``; `NOT_RUNNING` when the app is not running it."""
    del host
    return NOT_RUNNING
