"""What the desk says when a tunnel ends: ssh's own error, in a person's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoder_desktop.remote.tunnel import (
    TunnelState,
    TunnelStatus,
    explain,
    forward_command,
    remote_forward_line,
)


@pytest.mark.parametrize(("lines", "reason"), [
    (["ssh: connect to host 10.0.0.9 port 22: Connection refused"],
     "host unreachable (connection refused)"),
    (["ssh: connect to host box port 22: Connection timed out"],
     "host unreachable (timed out)"),
    (["ssh: Could not resolve hostname nobox: Name or service not known"],
     "host name not found"),
    (["Timeout, server 10.0.0.9 not responding."], "connection lost (no keep-alive answer)"),
    (["Connection to 127.0.0.1 closed by remote host."], "connection closed by the host"),
    (["me@box: Permission denied (publickey)."], "login refused (no key accepted)"),
    (["Host key verification failed."], "host key not trusted (log in once with ssh)"),
    (["Error: remote port forwarding failed for listen path /home/me/.qoder-desktop/desk.sock"],
     "the remote socket could not be made (run `qoder-desktop remote add` again)"),
    (["Connection to 127.0.0.1 closed by remote host.", "Transferred: sent 1, received 2 bytes"],
     "connection closed by the host"),
    (["something ssh never said before"], "something ssh never said before"),
    ([], "connection lost"),
])
def test_ssh_errors_read_as_reasons(lines: list[str], reason: str) -> None:
    assert explain(lines, 255) == reason


def test_the_state_line_names_the_host() -> None:
    assert TunnelStatus("box", TunnelState.CONNECTED).describe() == "box: connected"
    assert TunnelStatus("box", TunnelState.RECONNECTING, "host unreachable").describe() == (
        "box: reconnecting — host unreachable")


def test_the_tunnel_never_asks_and_gives_up_on_a_forward_it_cannot_make() -> None:
    argv = forward_command("me@box", "/home/me/.qoder-desktop/desk.sock", Path("/run/h.sock"))

    for option in ("ExitOnForwardFailure=yes", "BatchMode=yes", "StreamLocalBindUnlink=yes"):
        assert option in argv
    assert argv[argv.index("-R") + 1] == "/home/me/.qoder-desktop/desk.sock:/run/h.sock"
    assert argv[-2:] == ["--", "me@box"]
    assert remote_forward_line("/home/me/.qoder-desktop/desk.sock", Path("/run/h.sock")) == (
        "RemoteForward /home/me/.qoder-desktop/desk.sock /run/h.sock")
