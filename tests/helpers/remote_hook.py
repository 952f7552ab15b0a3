"""The standalone hook `remote add` puts on a host, run with a request on its stdin.

`standalone_hook` writes the very file `remote add` deploys (`remote.hook_file`) into a
folder with the host's token next to it and, in place of the tunnel's socket, a symlink
to a socket of the test's choosing: run on this machine it stands for a host's hook at
that host's socket on the desk.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoder_desktop.remote.hook_file import hook_source
from qoder_desktop.remote.layout import HOOK_NAME, SOCKET_NAME, TOKEN_NAME


def standalone_hook(folder: Path, socket: Path, token: str) -> list[str]:
    """The argv of the standalone hook in `folder`, reaching `socket` with `token`."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    hook = folder / HOOK_NAME
    hook.write_text(hook_source(), encoding="utf-8")
    (folder / TOKEN_NAME).write_text(token + "\n", encoding="utf-8")
    os.chmod(folder / TOKEN_NAME, 0o600)
    link = folder / SOCKET_NAME
    if link.is_symlink():
        link.unlink()
    link.symlink_to(socket)
    return [sys.executable, str(hook), "hook", "permission-request", "--agent", "claude"]


def permission_event(session_id: str, command: str = "echo hi",
                     cwd: str = "/srv/project") -> dict[str, Any]:
    """What the CLI hands its hook for a Bash call."""
    return {"session_id": session_id, "hook_event_name": "PermissionRequest",
            "cwd": cwd, "permission_mode": "default", "tool_name": "Bash",
            "tool_input": {"command": command}}


@dataclass
class HookRun:
    """One hook process: what it printed and how it ended."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def decision(self) -> dict[str, Any] | None:
        """The decision it printed for the CLI, or None when it printed nothing."""
        if not self.stdout.strip():
            return None
        return dict(json.loads(self.stdout)["hookSpecificOutput"]["decision"])


async def start_hook(argv: list[str], event: dict[str, Any]) -> asyncio.subprocess.Process:
    """Start a hook command (`argv`) with `event` on its stdin."""
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.write(json.dumps(event).encode())
    await process.stdin.drain()
    process.stdin.close()
    return process


async def finish_hook(process: asyncio.subprocess.Process, timeout: float = 60.0) -> HookRun:
    """Wait for a hook started with `start_hook`."""
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return HookRun(process.returncode, out.decode(errors="replace"),
                   err.decode(errors="replace"))

