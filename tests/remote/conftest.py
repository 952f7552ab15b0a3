"""The remote-host tests run against a real OpenSSH server (see `helpers.sshd`), with the
desk's keyring in memory and its host list in the test's own config folder."""

from __future__ import annotations

import pytest
from helpers.memory_keyring import MemoryKeyring
from helpers.remote_desk import Desk
from helpers.sshd import SshHost, remote_homes, ssh_host, ssh_server

from qoder_desktop.config.paths import AppPaths

__all__ = ["remote_homes", "ssh_host", "ssh_server"]


@pytest.fixture
def desk(memory_keyring: MemoryKeyring, ssh_host: SshHost, app_paths: AppPaths) -> Desk:
    """The desk, ready to add the rig's host."""
    del app_paths
    return Desk(memory_keyring, ssh_host)
