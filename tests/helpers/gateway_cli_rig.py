"""A terminal agent sent to the MCP approval gateway, as a person sets it up: the real
Claude Code CLI with ``--permission-prompt-tool mcp__qoder-desktop__approve
--mcp-config <file>`` (the flags "Connect an Agent…" shows). The app side is the
gateway, the broker and the hub on the test's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import ClassVar

from helpers.cli_rig import CliRig

from qoder_desktop.domain.models import Backend
from qoder_desktop.gateway.contract import PERMISSION_PROMPT_TOOL, mcp_config
from qoder_desktop.gateway.server import ApprovalGateway
from qoder_desktop.scripted_model import ThreadedScriptedModel
from qoder_desktop.store.database import Database

GATEWAY_TOKEN = "e2e-gateway-token-abcdefghijklmnop"


class GatewayCliRig(CliRig):
    """The app side (the gateway, broker, hub) and a workspace for the CLI."""

    backend: ClassVar[Backend] = Backend.EXTERNAL

    def __init__(self, tmp_path: Path, db: Database, model: ThreadedScriptedModel) -> None:
        super().__init__(tmp_path, db, model)
        self.gateway = ApprovalGateway(self.broker, self.hub, GATEWAY_TOKEN, port=0)

    async def start_cli(self, token: str | None = GATEWAY_TOKEN, scenario: str = "bash"
                        ) -> asyncio.subprocess.Process:
        """``claude -p`` with our flags, as a person would type it (token None: no header)."""
        config = mcp_config(self.gateway.url, token)
        if token is None:
            del config["mcpServers"]["qoder-desktop"]["headers"]  # type: ignore[index]
        config_file = self.workspace.parent / "qoder-desktop.json"
        config_file.write_text(json.dumps(config), encoding="utf-8")
        return await self.exec_cli(
            "--permission-prompt-tool", PERMISSION_PROMPT_TOOL, "--mcp-config",
            str(config_file), "--strict-mcp-config", "--setting-sources", "",
            scenario=scenario)


@contextlib.asynccontextmanager
async def open_gateway_rig(tmp_path: Path, db: Database, model: ThreadedScriptedModel
                           ) -> AsyncIterator[GatewayCliRig]:
    """A started gateway (port 0) with a broker behind it; afterwards, no CLI of the
    rig's config dir is left running."""
    rig = GatewayCliRig(tmp_path, db, model)
    async with rig.running(rig.gateway.start, rig.gateway.stop):
        yield rig
