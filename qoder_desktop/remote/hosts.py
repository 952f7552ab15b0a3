"""The remote hosts this desk knows, and each host's token.

The list lives next to the settings, in ``remote-hosts.json`` in the app's config folder
(0600, written atomically). It holds only what ``ssh`` needs to find the host again (the
destination as the person typed it, and an ``ssh_config`` file when one was given) and
what the deploy found there (the remote HOME, its python3, the hook's version). How the
host is reached — port, keys, jump hosts — stays in the person's OpenSSH configuration;
no password or key is ever stored.

Each host's token (the hook on the host and the desk's listener for that host prove to
each other that they hold it) is kept in the OS keyring only, never in a file on the desk.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import secrets
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import SERVICE_NAME, SecretSource, SecretStore, SecretValue
from qoder_desktop.remote.layout import HOOK_NAME, REMOTE_FOLDER, SOCKET_NAME, TOKEN_NAME

REGISTRY_NAME = "remote-hosts.json"
REGISTRY_VERSION = 1
_TOKEN_KEY_PREFIX = "remote-host-token:"
_MAX_DESTINATION = 255


class RemoteError(RuntimeError):
    """A remote-host action could not be done; the message says why, for people."""


def check_destination(text: str) -> str:
    """`text` as an ``ssh`` destination (``box``, ``user@box``, an alias), stripped.

    Raises:
        RemoteError: empty, too long, has spaces or control characters, or starts with
            ``-`` (``ssh`` would read it as an option).
    """
    name = text.strip()
    if not name:
        raise RemoteError("The host is empty: give an ssh destination, e.g. user@box or an "
                          "alias from ~/.ssh/config.")
    if len(name) > _MAX_DESTINATION:
        raise RemoteError(f"The host is longer than {_MAX_DESTINATION} characters.")
    if name.startswith("-"):
        raise RemoteError(f"{name!r} starts with '-', which ssh would read as an option.")
    if any(ch.isspace() or not ch.isprintable() for ch in name):
        raise RemoteError(f"{name!r} has spaces or control characters; give the host as "
                          "you would type it after `ssh`.")
    return name


@dataclass
class RemoteHost:
    """One remote host (see the module docstring).

    Attributes:
        name: the ssh destination as the person typed it.
        ssh_config: an OpenSSH client config passed with ``ssh -F``, or None (the
            person's own ``~/.ssh/config``).
        home: the remote user's HOME (absolute, as the host reported it).
        python: the python3 on the host that runs the hook.
        hook_version: the version of the hook put there.
        agents: the agents whose settings hold our hook there (``claude``, ``qoder``).
        added: when it was deployed last (ISO 8601, UTC).
        own_session: the person forwards the host's socket in an SSH session of their
            own (``RemoteForward``), so the app keeps no tunnel to it.
    """

    name: str
    ssh_config: str | None = None
    home: str = ""
    python: str = ""
    hook_version: str = ""
    agents: list[str] = field(default_factory=list)
    added: str = ""
    own_session: bool = False

    @property
    def remote_folder(self) -> str:
        """The private folder on the host (absolute)."""
        return posixpath.join(self.home, REMOTE_FOLDER)

    @property
    def remote_socket(self) -> str:
        """Where the tunnel puts the socket on the host (absolute)."""
        return posixpath.join(self.remote_folder, SOCKET_NAME)

    @property
    def remote_token(self) -> str:
        """The token file on the host (absolute)."""
        return posixpath.join(self.remote_folder, TOKEN_NAME)

    @property
    def remote_hook(self) -> str:
        """The standalone hook on the host (absolute)."""
        return posixpath.join(self.remote_folder, HOOK_NAME)

    @staticmethod
    def now() -> str:
        """The current time as `added` stores it."""
        return datetime.now(UTC).isoformat(timespec="seconds")


class HostRegistry:
    """The hosts in ``remote-hosts.json`` (see the module docstring).

    Args:
        path: the file (`default` finds it in the app's config folder).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def default(cls, environ: Mapping[str, str] | None = None) -> HostRegistry:
        """The registry in this user's config folder (honours ``QODER_DESKTOP_HOME``)."""
        return cls(AppPaths.default(environ).config_dir / REGISTRY_NAME)

    def hosts(self) -> list[RemoteHost]:
        """Every host, in the order they were added.

        Raises:
            RemoteError: the file cannot be read or is not a host list (left untouched).
        """
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RemoteError(f"Could not read {self.path}: {exc.strerror or exc}") from exc
        try:
            data = json.loads(raw)
            entries = data["hosts"]
            if not isinstance(entries, list):
                raise TypeError("'hosts' is not a list")
            return [_host_from(entry) for entry in entries]
        except (ValueError, KeyError, TypeError) as exc:
            raise RemoteError(f"{self.path} is not a list of remote hosts ({exc}); it was "
                              "left untouched. Fix or remove it, then try again.") from exc

    def get(self, name: str) -> RemoteHost | None:
        """The host called `name`, or None."""
        return next((host for host in self.hosts() if host.name == name), None)

    def put(self, host: RemoteHost) -> None:
        """Add `host`, or replace the host of the same name (keeping its place)."""
        hosts = self.hosts()
        for index, known in enumerate(hosts):
            if known.name == host.name:
                hosts[index] = host
                break
        else:
            hosts.append(host)
        self._write(hosts)

    def remove(self, name: str) -> bool:
        """Forget the host called `name`; False when it was not there."""
        hosts = self.hosts()
        kept = [host for host in hosts if host.name != name]
        if len(kept) == len(hosts):
            return False
        self._write(kept)
        return True

    def _write(self, hosts: list[RemoteHost]) -> None:
        text = json.dumps({"version": REGISTRY_VERSION, "hosts": [asdict(h) for h in hosts]},
                          indent=2, ensure_ascii=False) + "\n"
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                            dir=folder)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    stream.write(text)
                    stream.flush()
                    os.fsync(stream.fileno())
                os.chmod(temp, 0o600)
                os.replace(temp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        except OSError as exc:
            raise RemoteError(f"Could not write {self.path}: {exc.strerror or exc}") from exc


def _host_from(entry: Any) -> RemoteHost:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise TypeError("a host without a name")
    known = {key: entry[key] for key in RemoteHost.__dataclass_fields__ if key in entry}
    host = RemoteHost(**known)
    if not isinstance(host.agents, list) or not all(isinstance(a, str) for a in host.agents):
        raise TypeError(f"the agents of {host.name!r} are not a list of names")
    return host


# -- tokens (keyring only) -------------------------------------------------------------------


def token_key(name: str) -> str:
    """The keyring user name of the host's token (service ``qoder-desktop``)."""
    return _TOKEN_KEY_PREFIX + name


def host_token(store: SecretStore, name: str) -> SecretValue | None:
    """The host's token from the keyring, or None (no token, or no usable keyring).

    Raises:
        RemoteError: the keyring is usable but failed (e.g. locked).
    """
    if not store.check_backend().usable:
        return None
    try:
        value = store.backend.get_password(SERVICE_NAME, token_key(name))
    except Exception as exc:  # D-Bus and platform errors are not KeyringErrors
        raise RemoteError(f"The keyring failed reading the token of {name} "
                          f"({type(exc).__name__}).") from None
    if not value:
        return None
    found = SecretValue(value, SecretSource.KEYRING)
    if store.redactor is not None:
        store.redactor.add(found)
    return found


def ensure_host_token(store: SecretStore, name: str) -> SecretValue:
    """The host's token, made and kept in the keyring on first use.

    Raises:
        RemoteError: no usable keyring (the token is never kept anywhere else), or the
            keyring failed or did not keep it.
    """
    status = store.check_backend()
    if not status.usable:
        raise RemoteError(f"{status.message} A remote host's token is kept in the OS keyring "
                          "only; install and unlock one, then try again.")
    existing = host_token(store, name)
    if existing is not None:
        return existing
    created = secrets.token_urlsafe(32)
    try:
        store.backend.set_password(SERVICE_NAME, token_key(name), created)
        read_back = store.backend.get_password(SERVICE_NAME, token_key(name))
    except Exception as exc:  # the exception text is not shown: it could echo the token
        raise RemoteError(f"The keyring failed storing the token of {name} "
                          f"({type(exc).__name__}).") from None
    if read_back != created:
        raise RemoteError(f"The {status.backend} keyring did not keep the token of {name}.")
    token = SecretValue(created, SecretSource.KEYRING)
    if store.redactor is not None:
        store.redactor.add(token)
    return token


def forget_host_token(store: SecretStore, name: str) -> bool:
    """Remove the host's token from the keyring; False when it was not there."""
    if not store.check_backend().usable:
        return False
    try:
        if store.backend.get_password(SERVICE_NAME, token_key(name)) is None:
            return False
        store.backend.delete_password(SERVICE_NAME, token_key(name))
    except Exception as exc:
        raise RemoteError(f"The keyring failed removing the token of {name} "
                          f"({type(exc).__name__}).") from None
    return True
