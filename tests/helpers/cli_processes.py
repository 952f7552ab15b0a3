"""Finding Claude Code CLI processes a test started, so none outlives its test."""

from __future__ import annotations

import os
from pathlib import Path


def cli_processes_for(config_dir: Path) -> list[int]:
    """PIDs of processes whose environment names this config dir (Linux only)."""
    needle = f"CLAUDE_CONFIG_DIR={config_dir}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids
