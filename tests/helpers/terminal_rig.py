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
import signal
import struct
import subprocess
import termios
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import claude_agent_sdk

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.scripted_model import ThreadedScriptedModel, build_cli_env
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.terminal.install import Agent, install
from qoder_desktop.terminal.server import TerminalHookServer

TIMEOUT = 60.0
BUNDLED_CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


def install_hook(config_dir: Path) -> Path:
    """Our hook in ``config_dir/settings.json``, with the CLI asking in default mode."""
    install(Agent.CLAUDE, environ={**os.environ, "CLAUDE_CONFIG_DIR": str(config_dir)})
    path = config_dir / "settings.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["permissions"] = {"defaultMode": "default"}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@dataclass
class TerminalRig:
    """The app side (server, broker, hub) and a workspace for the CLI."""

    server: TerminalHookServer
    broker: ApprovalBroker
    hub: SessionHub
    ledger: Ledger
    model: ThreadedScriptedModel
    workspace: Path
    config_dir: Path
    added: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[tuple[BrokerEvent, ApprovalRequest, Decision | None]] = field(
        default_factory=asyncio.Queue)
    first_result: int = 0
    """Tool results the (shared) scripted model recorded before this test."""

    def __post_init__(self) -> None:
        self.first_result = len(self.model.tool_results)

    async def next_request(self) -> ApprovalRequest:
        return await asyncio.wait_for(self.added.get(), TIMEOUT)

    async def next_finished(self) -> tuple[BrokerEvent, ApprovalRequest, Decision | None]:
        return await asyncio.wait_for(self.finished.get(), TIMEOUT)

    def cli_env(self, scenario: str) -> dict[str, str]:
        return {**os.environ, **build_cli_env(self.model.base_url, self.config_dir,
                                              scenario=scenario)}

    async def start_cli(self, scenario: str = "bash", *args: str) -> asyncio.subprocess.Process:
        """``claude -p`` as a person types it: no permission flags at all (`args` added,
        e.g. ``--session-id``)."""
        return await asyncio.create_subprocess_exec(
            str(BUNDLED_CLI), "-p", "Go ahead.", "--output-format", "json", *args,
            cwd=self.workspace, env=self.cli_env(scenario), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)

    async def finish(self, process: asyncio.subprocess.Process) -> tuple[int, dict[str, Any],
                                                                         str]:
        """Wait (bounded) for the CLI; (returncode, its JSON result, stderr)."""
        try:
            out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
        finally:
            kill_group(process.pid)
        assert process.returncode is not None
        text = out.decode(errors="replace")
        return process.returncode, json.loads(text) if text.strip() else {}, err.decode(
            errors="replace")

    def start_interactive(self, scenario: str = "bash") -> PtyCli:
        """``claude "Go ahead."`` in a terminal, as a person starts it."""
        env = self.cli_env(scenario)
        seed_interactive_config(self.config_dir, self.workspace, env["ANTHROPIC_API_KEY"])
        return PtyCli.start([str(BUNDLED_CLI), "Go ahead."], self.workspace, env)

    def results(self, tool_use_id: str | None = None) -> list[Any]:
        return [r for r in self.model.tool_results[self.first_result:]
                if tool_use_id is None or r.tool_use_id == tool_use_id]


def kill_group(pid: int) -> None:
    """Kill a process group we started, if it still runs."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


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
