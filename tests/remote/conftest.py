"""The remote-host tests run against a real OpenSSH server (see `helpers.sshd`)."""

from helpers.sshd import remote_homes, ssh_host, ssh_server

__all__ = ["remote_homes", "ssh_host", "ssh_server"]
