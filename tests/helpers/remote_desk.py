"""The desk side of a remote-host test: ``qoder-desktop remote`` with a trusted in-memory
keyring and the host list under the test's QODER_DESKTOP_HOME."""

from __future__ import annotations

from helpers.memory_keyring import MemoryKeyring
from helpers.sshd import SshHost

from qoder_desktop.config.secrets import SERVICE_NAME, SecretStore
from qoder_desktop.remote.commands import remote_main
from qoder_desktop.remote.hosts import HostRegistry, token_key


class Desk:
    """`remote_main` as a person runs it on the desk, against the rig's `host`."""

    def __init__(self, keyring: MemoryKeyring, host: SshHost) -> None:
        self.keyring = keyring
        self.store = SecretStore(keyring, extra_allowed=(MemoryKeyring,))
        self.registry = HostRegistry.default()
        self.host = host

    def remote(self, *argv: str, config: bool = True) -> int:
        """``qoder-desktop remote ARGV`` (``--ssh-config`` of the rig added for add and
        remove unless `config` is False)."""
        words = list(argv)
        if config and words[0] in ("add", "remove"):
            words += ["--ssh-config", str(self.host.config)]
        return remote_main(words, store=self.store, registry=self.registry)

    def token(self, name: str) -> str | None:
        """The host's token in the desk's keyring, or None."""
        return self.keyring.passwords.get((SERVICE_NAME, token_key(name)))
