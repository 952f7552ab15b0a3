"""Where Qoder Desktop keeps the user's things on disk.

Everything lives under the platform's per-user folders (``platformdirs``), unless the
environment variable ``QODER_DESKTOP_HOME`` names a folder: then config, data, state and
cache all live under it (``config/``, ``data/``, ``state/``, ``cache/``). Tests and the
demo set it so that nothing touches the user's real folders.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from platformdirs import PlatformDirs

APP_NAME = "qoder-desktop"
APP_AUTHOR = "Qoder"
HOME_ENV = "QODER_DESKTOP_HOME"

_PRIVATE_DIR_MODE = 0o700


@dataclass(frozen=True)
class AppPaths:
    """The folders the app reads and writes.

    Attributes:
        config_dir: user settings (``settings.json``).
        data_dir: the SQLite database (sessions, rules, the decision ledger).
        state_dir: remembered window state, kept apart from settings.
        cache_dir: anything that can be thrown away.
    """

    config_dir: Path
    data_dir: Path
    state_dir: Path
    cache_dir: Path

    @classmethod
    def default(cls, environ: Mapping[str, str] | None = None) -> AppPaths:
        """The paths for this user, honouring ``QODER_DESKTOP_HOME``.

        Args:
            environ: the environment to read (``os.environ`` when None).
        """
        env = os.environ if environ is None else environ
        home = env.get(HOME_ENV, "").strip()
        if home:
            return cls.under(Path(home))
        dirs = PlatformDirs(appname=APP_NAME, appauthor=APP_AUTHOR)
        return cls(
            config_dir=dirs.user_config_path,
            data_dir=dirs.user_data_path,
            state_dir=dirs.user_state_path,
            cache_dir=dirs.user_cache_path,
        )

    @classmethod
    def under(cls, root: Path) -> AppPaths:
        """All folders below one root (what ``QODER_DESKTOP_HOME`` does)."""
        base = Path(os.path.abspath(os.path.expanduser(root)))
        return cls(
            config_dir=base / "config",
            data_dir=base / "data",
            state_dir=base / "state",
            cache_dir=base / "cache",
        )

    def ensure(self) -> AppPaths:
        """Create the folders (owner-only, mode 0700) and return self."""
        for folder in (self.config_dir, self.data_dir, self.state_dir, self.cache_dir):
            folder.mkdir(parents=True, exist_ok=True, mode=_PRIVATE_DIR_MODE)
            if os.name == "posix":
                os.chmod(folder, _PRIVATE_DIR_MODE)
        return self

    @property
    def database(self) -> Path:
        """The SQLite file for sessions, session rules and the ledger."""
        return self.data_dir / "qoder-desktop.sqlite3"

    @property
    def settings_file(self) -> Path:
        """The user's settings (JSON)."""
        return self.config_dir / "settings.json"

    @property
    def window_state_file(self) -> Path:
        """Remembered window geometry and layout (JSON)."""
        return self.state_dir / "window.json"

    @property
    def log_file(self) -> Path:
        """The app's log (secrets redacted)."""
        return self.state_dir / "qoder-desktop.log"
