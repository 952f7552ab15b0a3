"""The ``RemoteForward`` line offered to people who keep their own SSH session: ssh's own
parser takes it, and it forwards the host's socket in its private folder to this host's
socket on the desk."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from helpers.sshd import ssh_reads

from qoder_desktop.config.paths import HOME_ENV
from qoder_desktop.remote.hosts import RemoteHost
from qoder_desktop.remote.overview import forward_in_use, forward_line, host_socket_path
from qoder_desktop.remote.tunnel_state import NOT_RUNNING

pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH's client is "
                                "not installed (apt-get install openssh-client)")


def test_ssh_takes_the_line_as_the_host_socket_to_the_desk_socket() -> None:
    host = RemoteHost("me@box", home="/home/me")

    line = forward_line(host)

    assert ssh_reads(line) == (f"remoteforward /home/me/.qoder-desktop/desk.sock "
                               f"{host_socket_path('me@box')}")


def test_paths_with_spaces_stay_one_word_each(monkeypatch: pytest.MonkeyPatch) -> None:
    # A short folder: a socket path must fit a Unix socket address (108 bytes), and
    # pytest's own temporary folders under xdist are too deep for that.
    desk = Path(tempfile.mkdtemp(prefix="qd desk ", dir="/tmp"))
    monkeypatch.setenv(HOME_ENV, str(desk))
    host = RemoteHost("box", home="/home/Jane Doe")

    assert ssh_reads(forward_line(host)) == (
        f"remoteforward /home/Jane Doe/.qoder-desktop/desk.sock {host_socket_path('box')}")
    assert " " in str(host_socket_path("box"))
    shutil.rmtree(desk)


def test_each_host_has_its_own_desk_socket() -> None:
    assert host_socket_path("box") != host_socket_path("me@box")
    assert host_socket_path("box").parent == host_socket_path("me@box").parent


def test_which_way_in_is_active_follows_the_tunnel() -> None:
    assert forward_in_use("connected").startswith("In use: the app's tunnel")
    assert forward_in_use("stopped — your own SSH session forwards (RemoteForward)"
                          ).startswith("In use: your own SSH session")
    assert forward_in_use(NOT_RUNNING).startswith("In use: neither yet")
