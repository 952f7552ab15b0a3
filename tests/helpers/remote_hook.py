"""The hook command at a socket and token of the test's choosing, as a host runs it.

`hook_files` copies the hook's own modules (stdlib only: `hook_client` and `protocol`)
with a small runner into a folder; the runner answers one ``PermissionRequest`` like the
installed hook, but connects to the socket and reads the token the command line names.
Run locally it stands for a host's hook at that host's socket on the desk; copied into a
remote user's HOME it runs on the "remote" host, over the tunnel.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import qoder_desktop

SOURCES = ("__init__.py", "terminal/__init__.py", "terminal/protocol.py",
           "terminal/hook_client.py")
RUNNER = """\
import pathlib, sys
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
from qoder_desktop.terminal import hook_client, protocol
socket_file, token_file = (pathlib.Path(p).expanduser() for p in sys.argv[1:3])
protocol.socket_path = lambda environ=None: socket_file
protocol.token_path = lambda environ=None: token_file
sys.exit(hook_client.run(sys.argv[3] if len(sys.argv) > 3 else "claude"))
"""


def hook_files(folder: Path) -> Path:
    """Write the hook's modules and the runner under `folder`; the runner's path."""
    package = Path(qoder_desktop.__file__).parent
    for name in SOURCES:
        target = folder / "lib" / "qoder_desktop" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package / name, target)
    runner = folder / "hook.py"
    runner.write_text(RUNNER, encoding="utf-8")
    return runner


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


def local_hook(runner: Path, socket: Path, token_file: Path) -> list[str]:
    """The argv of the runner on this machine."""
    return [sys.executable, str(runner), str(socket), str(token_file)]
