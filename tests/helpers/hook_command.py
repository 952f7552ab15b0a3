"""Our real hook command, run as Claude Code runs it before its own permission prompt."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from typing import Any

from qoder_desktop.domain.hook_events import TerminalAgent, hook_arguments

HOOK_ARGV = [sys.executable, "-m", "qoder_desktop", *hook_arguments(TerminalAgent.CLAUDE)]
"""The command line Claude Code runs for our installed hook (this interpreter)."""


async def start_hook(event: Mapping[str, Any] | bytes | None, *, quiet: bool = False
                     ) -> asyncio.subprocess.Process:
    """Start the hook command with `event` as JSON on its stdin (bytes: sent as they are),
    then closed; None leaves stdin open and empty. `quiet`: its output is thrown away."""
    output = asyncio.subprocess.DEVNULL if quiet else asyncio.subprocess.PIPE
    process = await asyncio.create_subprocess_exec(
        *HOOK_ARGV, stdin=asyncio.subprocess.PIPE, stdout=output, stderr=output)
    if event is not None:
        assert process.stdin is not None
        process.stdin.write(event if isinstance(event, bytes) else json.dumps(event).encode())
        await process.stdin.drain()
        process.stdin.close()
    return process
