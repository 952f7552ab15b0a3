"""A private QODER_DESKTOP_HOME for tests that start the real `qoder-desktop` process."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def app_home(home: Path, **settings: Any) -> int:
    """Write `home`'s settings with `settings` and the gateway on a free port (so apps that
    run side by side, as under pytest-xdist, never meet on the default port); returns it."""
    port = free_port()
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "settings.json").write_text(
        json.dumps({**settings, "gateway_port": port}), encoding="utf-8")
    return port
