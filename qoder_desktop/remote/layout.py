"""Where things live on a remote host: one private folder in the remote user's HOME.

``~/.qoder-desktop/`` (0700) holds the standalone hook (`HOOK_NAME`, 0700), the host's
token (`TOKEN_NAME`, 0600) and, while the app's tunnel runs, the socket the tunnel
forwards to the desk (`SOCKET_NAME`). The hook connects to that socket; when it is not
there (the app is closed, the tunnel is down) the hook steps aside at once.
"""

from __future__ import annotations

REMOTE_FOLDER = ".qoder-desktop"
"""The private folder, relative to the remote user's HOME."""
HOOK_NAME = "qoder-desktop-hook.py"
"""The standalone hook (one standard-library file)."""
TOKEN_NAME = "desk.token"
"""The host's token: the hook proves it holds it, and checks the desk holds it too."""
SOCKET_NAME = "desk.sock"
"""The socket the tunnel (``ssh -R``) puts on the host, forwarded to this host's socket on
the desk."""
FOLDER_MODE = 0o700
HOOK_MODE = 0o700
TOKEN_MODE = 0o600

SOURCES_SENT: tuple[tuple[str, str], ...] = (
    ("domain", "hook_events.py"), ("terminal", "protocol.py"),
    ("terminal", "transcript_watch.py"), ("terminal", "hook_client.py"),
    ("terminal", "install.py"), ("remote", "on_host.py"))
"""The package's source files (folder, name) that a deploy sends to a host as text; the
bundle must carry them (``packaging/qoder-desktop.spec``)."""


def package_source(folder: str, name: str) -> str:
    """The text of one of `SOURCES_SENT`, read from the installed package."""
    from importlib import resources

    if (folder, name) not in SOURCES_SENT:
        raise ValueError(f"{folder}/{name} is not one of the sources sent to a host")
    return resources.files("qoder_desktop").joinpath(folder, name).read_text(encoding="utf-8")
