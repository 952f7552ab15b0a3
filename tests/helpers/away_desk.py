"""Away mode's real core behind the desk's view tests: `away_core_factory` over the
test's database and in-memory keyring (the desk's CA, the device registry, `AwayMode`
and its HTTPS server on 127.0.0.1), on a free pair of ports."""

from __future__ import annotations

import socket


def free_port_pair() -> int:
    """A port whose next one is free too on 127.0.0.1 (Away mode serves the
    certificate page on port + 1)."""
    for _attempt in range(50):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = int(first.getsockname()[1])
            if port >= 65534:
                continue
            with socket.socket() as second:
                try:
                    second.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return port
    raise RuntimeError("no free pair of ports on 127.0.0.1")
