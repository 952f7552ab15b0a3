"""A terminal session's transcript is followed while its CLI runs: the follower rests
when the CLI exits (after reading what it wrote last) or after a quiet spell, and goes on
from where it stopped with the session's next request, so no line is lost or shown twice.

The CLI here is a process of its own that runs our real hook command as its child (as
Claude Code does) and exits after it; the app knows it by the socket's peer credentials.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.terminal_rig import TIMEOUT, TerminalRig

from qoder_desktop.agents.ended_sessions import ENDED_SESSIONS_KEPT
from qoder_desktop.domain.models import Decision, SessionState
from qoder_desktop.domain.session_options import TranscriptEvent
from qoder_desktop.terminal.transcript import TranscriptFollower

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the CLI is known by its peer credentials: Linux")

CLI = """
import subprocess, sys
subprocess.run([sys.executable, "-m", "qoder_desktop", "hook", "permission-request",
                "--agent", "claude"], input=sys.stdin.buffer.read(), stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, check=False)
with open(sys.argv[1], "a", encoding="utf-8") as stream:
    stream.write(sys.argv[2])
"""
"""A CLI that asks once through the hook, writes one more line, and exits."""


def _prompt(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def _claim(session_id: str, cwd: Path, transcript: Path) -> dict[str, Any]:
    return {"hook_event_name": "PermissionRequest", "session_id": session_id,
            "cwd": str(cwd), "transcript_path": str(transcript), "permission_mode": "default",
            "tool_name": "Bash", "tool_input": {"command": "true"}}


async def _run_cli(event: dict[str, Any], transcript: Path, last_line: str
                   ) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLI, str(transcript), last_line, stdin=asyncio.subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.write(json.dumps(event).encode())
    await process.stdin.drain()
    process.stdin.close()
    return process


def _prompts(rig: TerminalRig, session_id: str) -> list[str]:
    return [line.text for line in rig.hub.transcript(session_id) if line.text.startswith("You:")]


async def _until(condition: Any) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not condition():
            await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_the_follower_rests_when_its_cli_exits_and_goes_on_with_the_next_request(
        rig: TerminalRig, isolated_home: Path) -> None:
    session_id = "s-rest"
    folder = isolated_home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-",
                                                              str(rig.workspace))
    folder.mkdir(parents=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text(_prompt("You: first"))

    first = await _run_cli(_claim(session_id, rig.workspace, path), path,
                           _prompt("You: written as the CLI quit"))
    request = await rig.next_request()
    follower = rig.server.transcript_follower(request.session_id)
    assert follower is not None and follower.following
    rig.broker.answer(request.request_id, Decision.deny("Not now."))
    await asyncio.wait_for(first.wait(), TIMEOUT)
    # Its CLI is gone: the follower reads the last line, then stops polling, and the
    # session shows as ended.
    await _until(lambda: not follower.following)
    assert _prompts(rig, session_id) == ["You: first", "You: written as the CLI quit"]
    assert rig.hub.session(session_id).state is SessionState.STOPPED

    # The person resumes the session in a new CLI, which writes before it asks.
    with path.open("a", encoding="utf-8") as stream:
        stream.write(_prompt("You: resumed"))
    second = await _run_cli(_claim(session_id, rig.workspace, path), path,
                            _prompt("You: quit again"))
    again = await rig.next_request()
    assert again.session_id == session_id  # the same session, taken over by the new CLI
    assert rig.server.transcript_follower(session_id) is follower and follower.following
    assert rig.hub.session(session_id).state is SessionState.RUNNING
    rig.broker.answer(again.request_id, Decision.deny("Still not."))
    await asyncio.wait_for(second.wait(), TIMEOUT)
    await _until(lambda: not follower.following)
    assert _prompts(rig, session_id) == ["You: first", "You: written as the CLI quit",
                                         "You: resumed", "You: quit again"]
    assert follower.rests == 2


@pytest.mark.asyncio
async def test_a_quiet_follower_rests_and_reads_on_from_the_same_place(tmp_path: Path) -> None:
    """Without a known CLI, a follower rests after its quiet spell; started again, it
    reads what was written meanwhile once."""
    path = tmp_path / "session.jsonl"
    path.write_text(_prompt("You: one"))
    lines: list[TranscriptEvent] = []
    follower = TranscriptFollower(path, "s-quiet", lines.append, idle_seconds=0.2)
    follower.start(interval=0.02)
    await _until(lambda: not follower.following)
    assert [line.text for line in lines] == ["You: one"] and follower.rests == 1
    with path.open("a", encoding="utf-8") as stream:
        stream.write(_prompt("You: two"))
    follower.start(interval=0.02)
    await _until(lambda: len(lines) == 2)
    await _until(lambda: not follower.following)
    assert [line.text for line in lines] == ["You: one", "You: two"]
    await follower.stop()


@pytest.mark.asyncio
async def test_a_session_the_hub_forgets_leaves_no_follower_or_binding_behind(
        rig: TerminalRig, isolated_home: Path) -> None:
    """A week of terminal sessions must not keep a transcript follower and a binding
    each: once the hub no longer lists an ended session, the server lets go of both."""
    session_id = "s-forgotten"
    folder = isolated_home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-",
                                                              str(rig.workspace))
    folder.mkdir(parents=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text(_prompt("You: first"))
    cli = await _run_cli(_claim(session_id, rig.workspace, path), path, _prompt("You: bye"))
    request = await rig.next_request()
    follower = rig.server.transcript_follower(session_id)
    assert follower is not None
    rig.broker.answer(request.request_id, Decision.deny("Not now."))
    await asyncio.wait_for(cli.wait(), TIMEOUT)
    await _until(lambda: rig.hub.session(session_id).state is SessionState.STOPPED)
    assert rig.server.transcript_follower(session_id) is follower  # ended, still listed

    for number in range(ENDED_SESSIONS_KEPT):  # later sessions end after it
        later = rig.hub.external_session(f"agent {number}").session_id
        rig.hub.state_changed(later, SessionState.STOPPED, None)
    assert session_id not in {info.session_id for info in rig.hub.sessions()}
    assert rig.server.transcript_follower(session_id) is None

    # Resumed after all that: a session of its own (the forgotten one's id is never
    # given again, so its History rows stay its own).
    with path.open("a", encoding="utf-8") as stream:
        stream.write(_prompt("You: resumed"))
    again = await _run_cli(_claim(session_id, rig.workspace, path), path, _prompt("You: end"))
    resumed = await rig.next_request()
    assert resumed.session_id == f"{session_id}~2"
    rig.broker.answer(resumed.request_id, Decision.deny("Still not."))
    await asyncio.wait_for(again.wait(), TIMEOUT)
