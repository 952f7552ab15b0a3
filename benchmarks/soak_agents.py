"""The soak's outside agents, in a process of their own: MCP gateway clients and terminal hooks.

The app under test (`bench_soak`) starts this process and sends one JSON line per round on
stdin::

    {"round": 3, "gateway": 125, "terminal": 125, "per_session": 25, "hook_processes": 1,
     "gateway_url": "...", "lanes": 2}

For the round it plays, side by side:

- **gateway**: agent runs started with ``--permission-prompt-tool``: a real MCP client
  (the `mcp` SDK's streamable HTTP client over loopback) opens an MCP session, calls
  ``approve`` `per_session` times, one call at a time, and closes it (the gateway makes
  one external session per MCP session);
- **terminal**: agents a person started in a terminal: one process per CLI session id
  (`soak_cli`, as each Claude Code session is a process), `per_session` calls each
  through the hook's own code (`terminal.hook_client.ask_app`, the real protocol with
  its challenge and sealed lines) over the app's Unix socket, with the transcript file
  the CLI would write; `hook_processes` of the round's calls run as the real hook
  command (a child of that process) instead. The process exits after its last call,
  as a CLI does when the person quits it.

It answers each round with one JSON line: the outcomes it saw
(``{"round": 3, "gateway": {"allow": 100, "deny": 25}, "terminal": {...}, "errors": []}``).
The token and the socket come from the environment the app set up (private
``QODER_DESKTOP_HOME``); the gateway token is read from ``QODER_SOAK_GATEWAY_TOKEN``.
Its work never counts as the app's: RSS, descriptors and tasks are measured in the app.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

TOKEN_ENV = "QODER_SOAK_GATEWAY_TOKEN"
HOOK = [sys.executable, "-m", "qoder_desktop", "hook", "permission-request", "--agent", "claude"]


def _outcome(answer: dict[str, Any] | None) -> str:
    """allow / deny / none (the terminal asks) from a permission result."""
    if not answer:
        return "none"
    decision = answer.get("hookSpecificOutput", {}).get("decision", answer)
    return str(decision.get("behavior", "other"))


async def gateway_lane(url: str, token: str, calls: int, per_session: int, workspace: str,
                       tally: collections.Counter[str], errors: list[str]) -> None:
    """`calls` approve calls, in MCP sessions of `per_session` calls each."""
    done = 0
    while done < calls:
        batch = min(per_session, calls - done)
        try:
            async with mcp_client(url, token, workspace) as session:
                for _ in range(batch):
                    arguments = {"tool_name": "Bash", "tool_use_id": f"toolu_{uuid.uuid4().hex}",
                                 "input": {"command": f"touch g{done}.txt"}}
                    call = await asyncio.wait_for(session.call_tool("approve", arguments), 120)
                    tally[_outcome(_tool_result(call))] += 1
                    done += 1
        except Exception as exc:  # counted, and the round goes on
            while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
                exc = exc.exceptions[0]
            errors.append(f"gateway: {type(exc).__name__}: {exc}")
            done += batch


@contextlib.asynccontextmanager
async def mcp_client(url: str, token: str, workspace: str) -> AsyncIterator[Any]:
    """An initialized MCP client session, as an agent's CLI opens one.

    Reads may wait as long as a person takes: the gateway sends a progress notification
    every 20 s while one decides (the tests' client gives up after 2 s of silence).
    """
    import httpx
    from mcp import types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from pydantic import FileUrl

    async def list_roots(_context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(f"file://{workspace}"))])

    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=httpx.Timeout(30, read=120.0)) as http, \
            streamable_http_client(url, http_client=http) as (read, write, _), \
            ClientSession(read, write, timedelta(seconds=300),
                          client_info=types.Implementation(name="soak-agent", version="1.0"),
                          list_roots_callback=list_roots) as session:
        await session.initialize()
        yield session


def _tool_result(call: Any) -> dict[str, Any]:
    """The permission result the gateway answered with."""
    if call.isError or len(call.content) != 1:
        raise RuntimeError(f"the gateway answered with an error: {call}")
    result: dict[str, Any] = json.loads(call.content[0].text)
    return result


def _transcript_line(tool_use_id: str, command: str) -> str:
    """What the CLI appends to its transcript before it asks (an assistant tool_use)."""
    return json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_use_id, "name": "Bash",
         "input": {"command": command}}]}}) + "\n"


def _result_line(tool_use_id: str, answer: dict[str, Any] | None) -> str:
    """What the CLI appends once the call ran or was denied (a user tool_result)."""
    denied = _outcome(answer) != "allow"
    return json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": denied,
         "content": "Permission denied" if denied else ""}]}}) + "\n"


def _transcript_path(workspace: str, session_id: str) -> Path:
    """Where Claude Code writes a session's transcript: its projects folder (under the
    soak's CLAUDE_CONFIG_DIR), a folder named for the working folder, the session's file
    (the hook server follows no other)."""
    from qoder_desktop.terminal.binding import slug

    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / slug(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session_id}.jsonl"


async def terminal_lane(calls: int, per_session: int, processes: int, workspace: str,
                        tally: collections.Counter[str], errors: list[str]) -> None:
    """`calls` hook calls in CLI sessions of `per_session` calls, each session's CLI a
    process of its own (`soak_cli`) that exits after its last call; `processes` of the
    calls as the real hook command."""
    done = 0
    while done < calls:
        batch = min(per_session, calls - done)
        plan = {"session_id": str(uuid.uuid4()), "workspace": workspace, "calls": batch,
                "first": done, "hook_processes": min(processes, batch)}
        processes -= plan["hook_processes"]
        try:
            cli = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "benchmarks.soak_cli", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE)
            out, _ = await asyncio.wait_for(cli.communicate(json.dumps(plan).encode()),
                                            120 * batch)
            result = json.loads(out.decode())
            errors += result.pop("errors")
            tally.update(result)
        except Exception as exc:
            errors.append(f"terminal: {type(exc).__name__}: {exc}")
        done += batch


def _split(total: int, lanes: int) -> list[int]:
    return [total // lanes + (1 if i < total % lanes else 0) for i in range(lanes)]


async def play_round(plan: dict[str, Any], workspace: str) -> dict[str, Any]:
    """One round: the gateway and terminal lanes side by side; the tallies."""
    token = os.environ[TOKEN_ENV]
    lanes = int(plan.get("lanes", 2))
    per_session = int(plan["per_session"])
    gateway: collections.Counter[str] = collections.Counter()
    terminal: collections.Counter[str] = collections.Counter()
    errors: list[str] = []
    hooks = _split(int(plan.get("hook_processes", 0)), lanes)
    work = [gateway_lane(plan["gateway_url"], token, n, per_session, workspace, gateway, errors)
            for n in _split(int(plan["gateway"]), lanes) if n]
    work += [terminal_lane(n, per_session, hooks[i], workspace, terminal, errors)
             for i, n in enumerate(_split(int(plan["terminal"]), lanes)) if n]
    await asyncio.gather(*work)
    return {"round": plan["round"], "gateway": dict(gateway), "terminal": dict(terminal),
            "errors": errors[:5], "error_count": len(errors)}


async def serve() -> None:
    """Read plans from stdin, play each, answer with its tallies; stop at end of input."""
    workspace = tempfile.mkdtemp(prefix="qoder-soak-agents-")
    loop = asyncio.get_running_loop()
    print(json.dumps({"ready": True}), flush=True)
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line.strip():
            return
        result = await play_round(json.loads(line), workspace)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(serve())
