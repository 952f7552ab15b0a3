"""A terminal agent as a person runs it: the real Claude Code CLI with our hook installed.

The CLI gets no permission flags; its user settings (``CLAUDE_CONFIG_DIR``) hold our
``PermissionRequest`` hook (installed by `install`) and ``permissions.defaultMode:
"default"``. It talks to the scripted model on loopback. The app side is the terminal
hook server, the broker and the hub on the test's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import termios
from collections.abc import AsyncIterator
from pathlib import Path
from typing import ClassVar

from helpers.cli_rig import (
    BUNDLED_CLI,
    TIMEOUT,
    CliRig,
    kill_group,
)

from qoder_desktop.domain.models import Backend
from qoder_desktop.scripted_model import ThreadedScriptedModel
from qoder_desktop.store.database import Database
from qoder_desktop.terminal.install import Agent, install
from qoder_desktop.terminal.server import TerminalHookServer

__all__ = ["BUNDLED_CLI", "TIMEOUT", "PtyCli", "TerminalRig", "install_hook", "kill_group",
           "open_terminal_rig"]


def install_hook(config_dir: Path) -> Path:
    """Our hook in ``config_dir/settings.json``, with the CLI asking in default mode."""
    install(Agent.CLAUDE, environ={**os.environ, "CLAUDE_CONFIG_DIR": str(config_dir)})
    path = config_dir / "settings.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["permissions"] = {"defaultMode": "default"}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


class TerminalRig(CliRig):
    """The app side (terminal hook server, broker, hub) and a workspace for the CLI."""

    backend: ClassVar[Backend] = Backend.TERMINAL

    def __init__(self, tmp_path: Path, db: Database, model: ThreadedScriptedModel,
                 wait_seconds: float) -> None:
        super().__init__(tmp_path, db, model)
        self.server = TerminalHookServer(self.broker, self.hub, wait_seconds=wait_seconds)

    async def start_cli(self, scenario: str = "bash", *args: str) -> asyncio.subprocess.Process:
        """``claude -p`` as a person types it: no permission flags at all (`args` added,
        e.g. ``--session-id``)."""
        return await self.exec_cli(*args, scenario=scenario)

    def start_interactive(self, scenario: str = "bash") -> PtyCli:
        """``claude "Go ahead."`` in a terminal, as a person starts it."""
        env = self.cli_env(scenario)
        seed_interactive_config(self.config_dir, self.workspace, env["ANTHROPIC_API_KEY"])
        return PtyCli.start([str(BUNDLED_CLI), "Go ahead."], self.workspace, env)


@contextlib.asynccontextmanager
async def open_terminal_rig(tmp_path: Path, db: Database, model: ThreadedScriptedModel,
                            wait_seconds: float = 120.0) -> AsyncIterator[TerminalRig]:
    """A started terminal hook server with our hook installed in a fresh config dir;
    afterwards, no CLI of that config dir is left running."""
    rig = TerminalRig(tmp_path, db, model, wait_seconds)
    install_hook(rig.config_dir)
    async with rig.running(rig.server.start, rig.server.stop):
        yield rig


ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[a-zA-Z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
                  rb"|\x1b[()][AB0]|\x1b[=>]")


def seed_interactive_config(config_dir: Path, workspace: Path, api_key: str) -> None:
    """What a person's config holds after the first run: onboarding done, the folder
    trusted and the API key approved (so the interactive CLI goes straight to work)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "theme": "dark",
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "projects": {str(workspace): {"hasTrustDialogAccepted": True,
                                      "hasCompletedProjectOnboarding": True}}}))


class PtyCli:
    """The interactive CLI in a pseudo-terminal (stdlib ``pty``), read on the test loop."""

    def __init__(self, process: subprocess.Popen[bytes], master: int) -> None:
        self.process = process
        self._master = master
        self._output = bytearray()
        self._changed = asyncio.Event()
        asyncio.get_running_loop().add_reader(master, self._read)

    @classmethod
    def start(cls, argv: list[str], cwd: Path, env: dict[str, str]) -> PtyCli:
        """Start `argv` on a new 40x120 terminal, in its own process group."""
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        process = subprocess.Popen(argv, cwd=cwd, env={**env, "TERM": "xterm-256color"},
                                   stdin=slave, stdout=slave, stderr=slave,
                                   start_new_session=True)
        os.close(slave)
        return cls(process, master)

    def _read(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self._master)
        self._output += data
        self._changed.set()

    @property
    def screen(self) -> str:
        """Everything printed so far, without escape sequences or spaces."""
        text = ANSI.sub(b"", bytes(self._output)).decode(errors="replace")
        return re.sub(r"\s+", "", text)

    async def wait_for(self, text: str, timeout: float = TIMEOUT) -> None:
        """Wait until `text` (spaces ignored) was printed."""
        needle = re.sub(r"\s+", "", text)
        async with asyncio.timeout(timeout):
            while needle not in self.screen:
                self._changed.clear()
                await self._changed.wait()

    def type(self, keys: str) -> None:
        """Type `keys` into the terminal."""
        os.write(self._master, keys.encode())

    def close(self) -> None:
        """Kill the CLI's process group and close the terminal."""
        kill_group(self.process.pid)
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self._master)
        with contextlib.suppress(OSError):
            os.close(self._master)
        self.process.wait(10)
