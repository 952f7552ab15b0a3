"""Files that hand secrets to an agent CLI, and the sweep of those a crash left behind.

- The MCP server config (its headers and env often carry tokens) goes to the CLI as a
  path to a 0600 file in a 0700 folder, never as JSON in the CLI's argv, which any
  local user can read in ``/proc/PID/cmdline``. The folder is removed once the CLI
  has started (it reads the file at start-up) and, at the latest, when the session ends.
- The Qoder SDK writes the personal access token to
  ``<tmp>/qoder-sdk-auth-*/payload.json``; qodercli deletes the file once it has read
  it and the SDK removes the folder when the session closes.
- A killed app leaves either behind: `sweep_private_dirs` removes this user's folders
  at the next start, all of them when no other instance of the app runs.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

AUTH_DIR_PREFIX = "qoder-sdk-auth-"
"""The Qoder SDK's access-token folders (its own prefix)."""
MCP_DIR_PREFIX = "qoder-desktop-mcp-"
"""Our MCP config folders."""
MCP_FILE_NAME = "mcp-config.json"
STALE_AGE_S = 24 * 3600
"""With another instance running, only folders older than this are swept (a folder of a
live session of that instance is young)."""


def file_backed(servers: dict[str, Any]) -> bool:
    """True when `servers` can go to the CLI as a file with nothing lost.

    In-process SDK servers need the SDK to see the dict, and the Qoder SDK turns a
    server's ``tools`` policies into permission rules only from the dict.
    """
    return bool(servers) and not any(
        isinstance(config, dict) and (config.get("type") == "sdk" or "tools" in config)
        for config in servers.values())


def write_mcp_config(servers: dict[str, Any], folder: str | None = None) -> Path:
    """Write ``{"mcpServers": servers}`` to a new 0600 file in a new 0700 folder."""
    directory = Path(tempfile.mkdtemp(prefix=MCP_DIR_PREFIX, dir=folder))
    path = directory / MCP_FILE_NAME
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump({"mcpServers": servers}, handle)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return path


def remove_private_file(path: Path | None) -> None:
    """Remove a file written here (and its folder); a failure is logged, not raised."""
    if path is None:
        return
    try:
        path.unlink(missing_ok=True)
        if path.parent.name.startswith(MCP_DIR_PREFIX):
            path.parent.rmdir()
    except OSError as exc:
        log.warning("could not remove a private file of an agent session: %s", exc)


def sweep_private_dirs(folder: str | None = None, *, other_instance_running: bool,
                       max_age_s: float = STALE_AGE_S) -> list[Path]:
    """Remove this user's token and MCP config folders a crash left behind; returns them.

    With no other instance running, none of them belongs to a live session, so every
    one goes whatever its age; otherwise only those older than `max_age_s`.
    """
    root = Path(folder or tempfile.gettempdir())
    removed: list[Path] = []
    now = time.time()
    candidates = [*root.glob(f"{AUTH_DIR_PREFIX}*"), *root.glob(f"{MCP_DIR_PREFIX}*")]
    for candidate in candidates:
        try:
            info = candidate.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        if other_instance_running and now - info.st_mtime < max_age_s:
            continue
        shutil.rmtree(candidate, ignore_errors=True)
        if not candidate.exists():
            removed.append(candidate)
    return removed
