"""The standalone hook file that `qoder-desktop remote add` puts on a remote host, run as
a plain python3 without our package (``-I -S``) against the real hook server: it speaks
the same protocol as the local hook, and steps aside when it cannot reach the app."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

import pytest
from helpers.terminal_rig import TerminalRig

from qoder_desktop.domain.models import Decision
from qoder_desktop.remote.hook_file import hook_source
from qoder_desktop.terminal import protocol

EVENT = {"hook_event_name": "PermissionRequest", "session_id": "remote-1", "cwd": "/srv/app",
         "permission_mode": "default", "tool_name": "Bash",
         "tool_input": {"command": "make deploy"}, "transcript_path": "/nonexistent/r.jsonl"}
PYTHON = getattr(sys, "_base_executable", sys.executable)


def _standalone(folder: Path) -> Path:
    folder.mkdir(mode=0o700)
    hook = folder / "qoder-desktop-hook.py"
    hook.write_text(hook_source(), encoding="utf-8")
    return hook


async def _run(hook: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        PYTHON, "-I", "-S", str(hook), "hook", "permission-request", "--agent", "claude",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd="/")
    out, err = await asyncio.wait_for(process.communicate(json.dumps(EVENT).encode()), 30)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.asyncio
async def test_the_standalone_hook_asks_the_app_and_prints_its_answer(
        rig: TerminalRig, tmp_path: Path) -> None:
    hook = _standalone(tmp_path / "private")
    (hook.parent / "desk.sock").symlink_to(rig.server.socket_path)  # where a tunnel ends
    (hook.parent / "desk.token").write_text(protocol.token_path().read_text())

    running = asyncio.ensure_future(_run(hook))
    request = await rig.next_request()
    rig.broker.answer(request.request_id, Decision.deny("not on a Friday"))
    code, out, err = await running

    assert (request.tool_name, request.tool_input) == ("Bash", {"command": "make deploy"})
    assert (code, err) == (0, "")
    assert json.loads(out)["hookSpecificOutput"]["decision"] == {
        "behavior": "deny", "message": "not on a Friday"}


@pytest.mark.asyncio
async def test_the_standalone_hook_refuses_a_listener_without_the_token(
        rig: TerminalRig, tmp_path: Path) -> None:
    hook = _standalone(tmp_path / "private")
    (hook.parent / "desk.sock").symlink_to(rig.server.socket_path)
    (hook.parent / "desk.token").write_text("another-hosts-token\n")

    code, out, err = await _run(hook)

    assert (code, out) == (0, "")
    assert "could not prove it is Qoder Desktop" in err
    assert rig.added.empty()


@pytest.mark.parametrize("socket_state", ["missing", "nobody listening"])
@pytest.mark.asyncio
async def test_without_the_tunnel_the_standalone_hook_prints_nothing(
        tmp_path: Path, socket_state: str) -> None:
    hook = _standalone(tmp_path / "private")
    (hook.parent / "desk.token").write_text("some-token\n")
    if socket_state == "nobody listening":
        stale = socket.socket(socket.AF_UNIX)
        stale.bind(os.fspath(hook.parent / "desk.sock"))
        stale.close()  # the file stays; connecting to it is refused

    assert await _run(hook) == (0, "", "")
