"""What every way in from a terminal shares: the real Claude Code CLI started as a person
starts it, and the app side behind it (broker, hub, ledger) on the test's loop.

The ways differ only in how the CLI reaches the app: the installed PermissionRequest
hook (`helpers.terminal_rig.TerminalRig`) or the MCP approval gateway
(`helpers.gateway_cli_rig.GatewayCliRig`). Each rig starts the CLI its way
(`start_cli`); the rest, the requests it raised, its results and its end, is here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, Self

import claude_agent_sdk
from helpers.app_side import app_side
from helpers.broker_events import Finished, route_broker_events
from helpers.cli_processes import assert_no_cli_left

from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.scripted_model import ThreadedScriptedModel, build_cli_env
from qoder_desktop.store.database import Database

TIMEOUT = 60.0
"""Seconds a test waits for the CLI before it fails instead of hanging."""
BUNDLED_CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


def workspace_and_config(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh workspace for the CLI and the path of its own config dir."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return workspace, tmp_path / "claude-config"


def kill_group(pid: int) -> None:
    """Kill a process group we started, if it still runs."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class CliRig:
    """The app side behind one way in, a workspace for the CLI and its config dir.

    Attributes:
        backend: how the app labels the sessions of this way in.
        added, finished: the broker's events (see `helpers.broker_events`).
    """

    backend: ClassVar[Backend]

    def __init__(self, tmp_path: Path, db: Database, model: ThreadedScriptedModel) -> None:
        self.workspace, self.config_dir = workspace_and_config(tmp_path)
        self.ledger, self.broker, self.hub = app_side(db)
        self.model = model
        self.added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
        self.finished: asyncio.Queue[Finished] = asyncio.Queue()
        self.first_result = len(model.tool_results)
        """Tool results the (shared) scripted model recorded before this test."""

    @contextlib.asynccontextmanager
    async def running(self, start: Callable[[], Awaitable[None]],
                      stop: Callable[[], Awaitable[None]]) -> AsyncIterator[Self]:
        """The rig with the broker's events routed to it and its way in started (`start`);
        afterwards the way in is stopped and no CLI of the rig's config dir is left."""
        route_broker_events(self.broker, self.added, self.finished)
        await start()
        try:
            yield self
        finally:
            await stop()
            await assert_no_cli_left(self.config_dir)

    async def next_request(self) -> ApprovalRequest:
        """The next request that waits for a person (fails after `TIMEOUT`)."""
        return await asyncio.wait_for(self.added.get(), TIMEOUT)

    async def next_finished(self) -> Finished:
        """The next answered or withdrawn request (fails after `TIMEOUT`)."""
        return await asyncio.wait_for(self.finished.get(), TIMEOUT)

    def cli_env(self, scenario: str) -> dict[str, str]:
        """The CLI's environment: the scripted model on loopback, its own config dir."""
        return {**os.environ, **build_cli_env(self.model.base_url, self.config_dir,
                                              scenario=scenario)}

    async def exec_cli(self, *args: str, scenario: str) -> asyncio.subprocess.Process:
        """``claude -p "Go ahead." --output-format json <args>`` in the workspace, in a
        process group of its own."""
        return await asyncio.create_subprocess_exec(
            str(BUNDLED_CLI), "-p", "Go ahead.", "--output-format", "json", *args,
            cwd=self.workspace, env=self.cli_env(scenario), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)

    async def finish(self, process: asyncio.subprocess.Process
                     ) -> tuple[int, dict[str, Any], str]:
        """Wait (bounded) for the CLI; (returncode, its JSON result or {}, stderr)."""
        try:
            out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
        finally:
            kill_group(process.pid)
        assert process.returncode is not None
        text = out.decode(errors="replace")
        try:
            result = json.loads(text) if text.strip() else {}
        except ValueError:
            result = {"unparsed": text}
        return process.returncode, result, err.decode(errors="replace")

    def results(self, tool_use_id: str | None = None) -> list[Any]:
        """The tool results the model saw in this test (of `tool_use_id`, if given)."""
        return [r for r in self.model.tool_results[self.first_result:]
                if tool_use_id is None or r.tool_use_id == tool_use_id]
