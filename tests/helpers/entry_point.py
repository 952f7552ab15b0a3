"""Run the installed ``qoder-desktop`` console script as a user would, in a scratch world."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENTRY_POINT = Path(sys.executable).with_name("qoder-desktop")
"""The console script `pip install -e .` put next to this interpreter."""


def scratch_env(root: Path, path_dirs: tuple[Path, ...] = (), **extra: str) -> dict[str, str]:
    """An environment whose HOME, data folder and PATH all live under `root`.

    No display, no CLAUDE_CONFIG_DIR (unless in `extra`): nothing reaches the real
    ~/.claude, ~/.qoder or the user's Qoder Desktop folders.
    """
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "CLAUDE_CONFIG_DIR",
                          "QODERCLI_PATH", "XDG_RUNTIME_DIR")
           and not key.startswith(("XDG_CONFIG", "XDG_DATA", "XDG_STATE", "XDG_CACHE"))}
    env.update(HOME=str(home), USERPROFILE=str(home), QODER_DESKTOP_HOME=str(root / "qd"),
               PATH=os.pathsep.join(str(p) for p in path_dirs) or str(root / "no-bin"))
    env.update(extra)
    return env


def run_cli(env: dict[str, str], *args: str, stdin: str | None = None,
            ) -> subprocess.CompletedProcess[str]:
    """``qoder-desktop ARGS`` (the real entry point) in `env`."""
    assert ENTRY_POINT.is_file(), f"{ENTRY_POINT} is missing: pip install -e ."
    return subprocess.run([str(ENTRY_POINT), *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)
