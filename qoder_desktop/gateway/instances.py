"""Which of this user's Qoder Desktops serves the gateway on which port.

Two copies with different data folders (``QODER_DESKTOP_HOME``) may have different
gateway tokens (no keyring: a token per run), so the token challenge of `identity`
cannot tell the other copy from a squatter. Each gateway therefore keeps a record per
port in a folder of this OS user that does not move with the data folder
(``~/.local/state/qoder-desktop/gateways/<port>.json``, mode 0600 in a 0700 folder):
its data folder and a random key made for this run. The gateway answers the identity
challenge with an HMAC of the asker's nonce under that key too, so an asker that finds
a record for the port can check that the listener is that copy.

Nothing about the data folder goes over the wire (the identity route answers anyone
who asks, squatters included): the answer is two HMACs of the asker's nonce. The key
authorises nothing; it only lets the copy prove "I am the one recorded for this port"
to a process that can read this user's files. A record is trusted only when it and its
folder belong to this user and nobody else can write them. Stdlib and platformdirs only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from qoder_desktop.config.paths import APP_AUTHOR, APP_NAME, HOME_ENV, AppPaths
from qoder_desktop.config.private_file import write_private

log = logging.getLogger(__name__)

_FOLDER_MODE = 0o700


def copy_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The folder that names this copy for people: ``QODER_DESKTOP_HOME``, else the
    data folder."""
    env = os.environ if environ is None else environ
    home = env.get(HOME_ENV, "").strip()
    if home:
        return Path(os.path.abspath(os.path.expanduser(home)))
    return AppPaths.default(env).data_dir


@dataclass(frozen=True)
class InstanceRecord:
    """One running gateway: its port, its copy's data folder, and this run's key.

    Attributes:
        port: the TCP port it serves on.
        data_folder: the copy's data folder (`copy_folder`).
        key: the random key of this run (not shown in a repr).
    """

    port: int
    data_folder: str
    key: str = field(repr=False)


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by nobody else (always true off POSIX)."""
    if os.name != "posix":
        return True
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class InstanceRegistry:
    """The records of this user's running gateways, one file per port.

    Args:
        folder: where the records live (`default` for the real one).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def default(cls) -> InstanceRegistry:
        """This user's registry: in the platform's state folder, whatever the data
        folder (so every copy of this user finds it)."""
        from platformdirs import PlatformDirs

        dirs = PlatformDirs(appname=APP_NAME, appauthor=APP_AUTHOR)
        return cls(dirs.user_state_path / "gateways")

    def _path(self, port: int) -> Path:
        return self.folder / f"{int(port)}.json"

    def register(self, port: int, data_folder: Path, key: str) -> bool:
        """Record that this run serves `port`; False (and a log line) when it cannot."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=_FOLDER_MODE)
            if os.name == "posix":
                os.chmod(self.folder, _FOLDER_MODE)
            text = json.dumps({"port": int(port), "data_folder": str(data_folder),
                               "key": key})
            write_private(self._path(port), text)
        except OSError as exc:
            log.warning("could not record the gateway's port in %s: %s", self.folder,
                        exc.strerror or type(exc).__name__)
            return False
        return True

    def lookup(self, port: int) -> InstanceRecord | None:
        """The record for `port`, or None (none, unreadable, malformed, or not private)."""
        path = self._path(port)
        try:
            if not _private(os.stat(self.folder)):
                return None
            with open(path, encoding="utf-8") as stream:
                if not _private(os.fstat(stream.fileno())):
                    return None
                data = json.loads(stream.read(65536))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        folder, key = data.get("data_folder"), data.get("key")
        if (data.get("port") != port or not isinstance(folder, str) or not folder
                or not isinstance(key, str) or len(key) < 32):
            return None
        return InstanceRecord(port, folder, key)

    def unregister(self, port: int, key: str) -> None:
        """Remove the record for `port` if it is this run's (another run's stays)."""
        record = self.lookup(port)
        if record is not None and record.key == key:
            with contextlib.suppress(OSError):
                os.unlink(self._path(port))
