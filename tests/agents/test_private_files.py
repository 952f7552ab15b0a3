"""Secrets handed to an agent CLI: what a real child process gets, and what is left behind.

The Qoder session runs the real Qoder SDK and its real subprocess transport; the CLI it
starts is a small stand-in (`QODERCLI_PATH`) that answers the handshake like qodercli
but, unlike qodercli, does not delete the access-token file it reads, so what removes
it here is ours. The test reads the child's ``/proc/PID/cmdline`` and ``environ``.
(The Claude CLI half is in tests/e2e/test_cli_secrets.py, with the real Claude Code CLI.)
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from helpers.qoder_peer import ScriptedQoderPeer

from qoder_desktop.agents.factory import sweep_stale_auth_dirs
from qoder_desktop.agents.private_files import (
    AUTH_DIR_PREFIX,
    MCP_DIR_PREFIX,
    write_mcp_config,
)
from qoder_desktop.agents.qoder import QoderSession
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import GATEWAY_TOKEN_ENV
from qoder_desktop.domain.models import Backend, SessionInfo
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

ACCESS_TOKEN = "pat_ACCESS_TOKEN_never_in_argv"
MCP_SECRET = "Bearer mcp-header-SECRET-4711"
GATEWAY_SECRET = "gateway-token-SECRET-0815"
SERVERS = {"notes": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                     "headers": {"Authorization": MCP_SECRET}}}

FAKE_CLI = '''#!{python}
"""Answers the Qoder SDK's handshake like qodercli; records what it could read."""
import hashlib, json, os, sys
record = os.environ["FAKE_CLI_RECORD"]
for raw in sys.stdin:
    message = json.loads(raw)
    if message.get("type") != "control_request":
        continue
    request = message["request"]
    if request.get("subtype") == "initialize":
        seen = {{"pid": os.getpid()}}
        payload = os.environ.get("QODER_SDK_AUTH_PAYLOAD_FILE")
        if payload:
            seen["payload_sha256"] = hashlib.sha256(open(payload, "rb").read()).hexdigest()
        args = sys.argv
        if "--mcp-config" in args:
            path = args[args.index("--mcp-config") + 1]
            seen["mcp_config"] = path
            seen["mcp_mode"] = oct(os.stat(path).st_mode & 0o777)
            seen["mcp_dir_mode"] = oct(os.stat(os.path.dirname(path)).st_mode & 0o777)
            seen["mcp_servers"] = json.load(open(path))["mcpServers"]
        with open(record, "w") as handle:
            json.dump(seen, handle)
        response = {initialize_response}
    else:
        response = {{}}
    print(json.dumps({{"type": "control_response", "response": {{
        "subtype": "success", "request_id": message["request_id"],
        "response": response}}}}), flush=True)
'''


class Sink:
    """Takes the session's reports and drops them (these tests look at the process)."""

    def add_transcript_line(self, event: object) -> None:
        """Ignored."""

    def state_changed(self, *args: object) -> None:
        """Ignored."""

    def tool_seen(self, *args: object) -> None:
        """Ignored."""


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in qodercli on QODERCLI_PATH; returns the file it records into."""
    script = tmp_path / "qodercli"
    script.write_text(FAKE_CLI.format(
        python=sys.executable,
        initialize_response=repr(ScriptedQoderPeer().initialize_response())))
    script.chmod(0o700)
    record = tmp_path / "cli-record.json"
    monkeypatch.setenv("QODERCLI_PATH", str(script))
    monkeypatch.setenv("QODER_SKIP_VERSION_CHECK", "1")
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    monkeypatch.setenv(GATEWAY_TOKEN_ENV, GATEWAY_SECRET)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return record


@pytest_asyncio.fixture
async def session(tmp_path: Path, fake_cli: Path) -> AsyncIterator[QoderSession]:
    """A Qoder session with an access token and an MCP server with a secret header."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    db = Database.open(tmp_path / "ledger.sqlite3")
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    options = SessionOptions(backend=Backend.QODER, cwd=str(workspace), mcp_servers=SERVERS)
    info = SessionInfo(session_id="s-secrets", name="secrets", backend=Backend.QODER,
                       cwd=str(workspace))
    qoder = QoderSession(info, options, broker, Sink())  # type: ignore[arg-type]
    qoder.access_token = ACCESS_TOKEN
    try:
        yield qoder
    finally:
        await qoder.stop()
        db.close()


def proc(pid: int, part: str) -> list[str]:
    """A /proc/PID file of NUL-separated strings."""
    return Path(f"/proc/{pid}/{part}").read_bytes().decode(errors="replace").split("\0")


@pytest.mark.asyncio
async def test_the_qoder_cli_gets_no_secret_in_argv_or_environ_and_no_file_is_left(
        session: QoderSession, fake_cli: Path, tmp_path: Path) -> None:
    await session.start()
    seen = json.loads(fake_cli.read_text())
    pid = seen["pid"]
    cmdline, environ = proc(pid, "cmdline"), proc(pid, "environ")

    # MCP headers: in a 0600 file (0700 folder) the CLI read, never in its argv.
    assert not any(MCP_SECRET in arg for arg in cmdline)
    assert seen["mcp_servers"] == SERVERS
    assert (seen["mcp_mode"], seen["mcp_dir_mode"]) == ("0o600", "0o700")
    assert Path(seen["mcp_config"]).name == "mcp-config.json"
    assert not Path(seen["mcp_config"]).parent.exists()  # gone once the CLI had started

    # The access token: the CLI read it at the handshake; the file is gone right after.
    expected = hashlib.sha256(json.dumps(
        {"type": "accessToken", "accessToken": ACCESS_TOKEN}).encode()).hexdigest()
    assert seen["payload_sha256"] == expected
    [payload] = [e.split("=", 1)[1] for e in environ
                 if e.startswith("QODER_SDK_AUTH_PAYLOAD_FILE=")]
    assert not Path(payload).exists()
    assert not any(ACCESS_TOKEN in item for item in cmdline + environ)

    # The app's gateway token stays in the app.
    assert not any(item.startswith(f"{GATEWAY_TOKEN_ENV}=") for item in environ)
    assert not any(GATEWAY_SECRET in item for item in environ + cmdline)

    leftovers = [p.name for p in (tmp_path / "tmp").iterdir()
                 if p.name.startswith(MCP_DIR_PREFIX)]
    assert leftovers == []


def test_the_mcp_config_file_is_private(tmp_path: Path) -> None:
    path = write_mcp_config(SERVERS, str(tmp_path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"mcpServers": SERVERS}


def test_a_young_leftover_is_swept_when_no_other_instance_runs(tmp_path: Path) -> None:
    young_token = tmp_path / f"{AUTH_DIR_PREFIX}young"
    young_token.mkdir()
    (young_token / "payload.json").write_text('{"accessToken": "pat_x"}')
    young_mcp = tmp_path / f"{MCP_DIR_PREFIX}young"
    young_mcp.mkdir()
    (young_mcp / "mcp-config.json").write_text("{}")
    unrelated = tmp_path / "someone-elses-folder"
    unrelated.mkdir()

    # Another instance runs: its live sessions' folders are young, so they stay.
    assert sweep_stale_auth_dirs(str(tmp_path), other_instance_running=True) == []
    assert young_token.exists() and young_mcp.exists()

    removed = sweep_stale_auth_dirs(str(tmp_path), other_instance_running=False)
    assert sorted(removed) == sorted([young_token, young_mcp])
    assert not young_token.exists() and not young_mcp.exists()
    assert unrelated.exists()


def test_an_old_leftover_is_swept_even_with_another_instance(tmp_path: Path) -> None:
    old = tmp_path / f"{MCP_DIR_PREFIX}old"
    old.mkdir()
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (day_ago, day_ago))
    assert sweep_stale_auth_dirs(str(tmp_path), other_instance_running=True) == [old]
