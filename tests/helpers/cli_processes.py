"""Finding Claude Code CLI processes a test started, so none outlives its test."""

from __future__ import annotations

import asyncio
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


async def assert_no_cli_left(config_dir: Path,
                             message: str = "a CLI process outlived its test") -> None:
    """Wait up to 5 s for the CLI processes of `config_dir` to end, then fail if any is
    left (Linux only: elsewhere there is no /proc to look in)."""
    if not Path("/proc/self/environ").exists():
        return
    for _ in range(50):
        if not cli_processes_for(config_dir):
            break
        await asyncio.sleep(0.1)
    assert cli_processes_for(config_dir) == [], message
