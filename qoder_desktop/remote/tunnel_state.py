"""The tunnel line of ``qoder-desktop remote status``: where the desk side plugs in.

The running app keeps one ``ssh -N -R`` per host (`serving`, `tunnel`) and writes how
each stands to ``<runtime>/hosts/tunnels.json`` (0600, replaced atomically, with the
app's process id) on every change; `describe_tunnel` is what ``remote status`` (a
separate, short-lived process) shows from it. With no such file, or one whose app is no
longer running, the tunnel runs only with the app: `NOT_RUNNING`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from qoder_desktop.remote.hosts import RemoteHost
from qoder_desktop.terminal import protocol

NOT_RUNNING = "not running (the app is closed)"
NOT_KEPT = "not kept by the running app (restart it to take this host)"
STATE_FILE = "tunnels.json"
HOSTS_FOLDER = "hosts"
"""The folder of the hosts' sockets and of `STATE_FILE`, in the app's runtime folder."""


def host_socket_path(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """Host `name`'s own socket on the desk (a digest keeps the path short and plain)."""
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    return protocol.runtime_dir(environ) / HOSTS_FOLDER / f"{digest}.sock"


def state_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the running app writes its tunnels' states."""
    return protocol.runtime_dir(environ) / HOSTS_FOLDER / STATE_FILE


def write_states(lines: Mapping[str, str], environ: Mapping[str, str] | None = None) -> None:
    """Write each host's tunnel line (``connected``, ``reconnecting — why``) for `remote
    status`; a failure to write is left to the caller (OSError)."""
    path = state_path(environ)
    text = json.dumps({"pid": os.getpid(), "hosts": dict(lines)}, ensure_ascii=False)
    handle, temp = tempfile.mkstemp(prefix=f".{STATE_FILE}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def clear_states(environ: Mapping[str, str] | None = None) -> None:
    """Remove the state file (the app stops keeping tunnels)."""
    with contextlib.suppress(OSError):
        state_path(environ).unlink()


def describe_tunnel(host: RemoteHost, environ: Mapping[str, str] | None = None) -> str:
    """The state of `host`'s tunnel for people, e.g. ``connected`` or ``reconnecting —
    host unreachable``; `NOT_RUNNING` when the app is not running it."""
    try:
        data = json.loads(state_path(environ).read_text(encoding="utf-8"))
        pid, lines = int(data["pid"]), data["hosts"]
    except (OSError, ValueError, KeyError, TypeError):
        return NOT_RUNNING
    if not _alive(pid) or not isinstance(lines, dict):
        return NOT_RUNNING
    line = lines.get(host.name)
    return str(line) if isinstance(line, str) else NOT_KEPT


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0
