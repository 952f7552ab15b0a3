"""What the real Claude Code CLI process gets: no MCP header in its argv, no gateway token.

Read from the running CLI's ``/proc/PID/cmdline`` and ``/proc/PID/environ``. The MCP
config reaches it as a path to a private file, removed once the CLI has started; the
CLI still knows the server (it read the file), as its MCP status shows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.claude_harness import WAIT, Harness

from qoder_desktop.config.secrets import GATEWAY_TOKEN_ENV

pytestmark = pytest.mark.asyncio

MCP_SECRET = "Bearer mcp-header-SECRET-4711"
GATEWAY_SECRET = "gateway-token-SECRET-0815"
SERVERS = {"notes": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                     "headers": {"Authorization": MCP_SECRET}}}


def proc(pid: int, part: str) -> list[str]:
    """A /proc/PID file of NUL-separated strings."""
    return Path(f"/proc/{pid}/{part}").read_bytes().decode(errors="replace").split("\0")


async def test_the_claude_cli_gets_mcp_headers_from_a_private_file_not_argv(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GATEWAY_TOKEN_ENV, GATEWAY_SECRET)
    session_id = await harness.start("bash", mcp_servers=SERVERS)
    session = harness.hub._sessions[session_id]  # the adapter, to reach its CLI process
    process = session._client._transport._process
    cmdline, environ = proc(process.pid, "cmdline"), proc(process.pid, "environ")

    assert not any(MCP_SECRET in arg for arg in cmdline)
    config = Path(cmdline[cmdline.index("--mcp-config") + 1])
    assert config.name == "mcp-config.json"
    assert not config.exists() and not config.parent.exists()
    status = await asyncio.wait_for(session._client.get_mcp_status(), WAIT)
    names = [server["name"] for server in status["mcpServers"]]
    assert "notes" in names

    assert not any(GATEWAY_SECRET in item for item in environ + cmdline)
    # The Claude SDK cannot drop a variable: it is there, empty (as if unset).
    assert [item for item in environ if item.startswith(f"{GATEWAY_TOKEN_ENV}=")] in (
        [], [f"{GATEWAY_TOKEN_ENV}="])
