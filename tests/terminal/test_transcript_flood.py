"""A transcript file that grows fast, or holds one huge line, never freezes the window:
the follower reads it a slice per loop turn on the app's loop (qasync), skips ahead with
a visible "… N lines skipped" line, and still closes a dialog the person answered in
the terminal. The longest gap between loop ticks is printed (run with -s to see it)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.hook_command import start_hook
from helpers.terminal_rig import TIMEOUT, TerminalRig

from qoder_desktop.agents.hub import HubEventKind, SessionHub
from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.terminal.transcript import MAX_LINE, TranscriptFollower

MIB = 1024 * 1024
CALL = {"command": "make release"}


def _line(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry).encode() + b"\n"


def _text(text: str) -> bytes:
    return _line({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": text}]}})


def _call(tool_use_id: str) -> bytes:
    return _line({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_use_id, "name": "Bash", "input": CALL}]}})


def _flood(size: int, tag: str, width: int = 120) -> bytes:
    """About `size` bytes of ordinary assistant lines (`width` characters of text)."""
    one = len(_text(f"{tag} 0000000 " + "x" * width))
    return b"".join(_text(f"{tag} {n:07d} " + "x" * width) for n in range(size // one))


class Ticker:
    """Counts loop turns (a task that sleeps a moment, again and again), keeps the
    longest gap between two of them, and notes in which turns the session's transcript
    got lines."""

    def __init__(self, hub: SessionHub, session_id: str) -> None:
        self.ticks = 0
        self.longest = 0.0
        self.turns_with_lines: set[int] = set()
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe = hub.subscribe(
            lambda event: self.turns_with_lines.add(self.ticks)
            if event.kind is HubEventKind.TRANSCRIPT and event.session_id == session_id
            else None)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(0.002)
            now = loop.time()
            self.ticks += 1
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> Ticker:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        self._unsubscribe()


@dataclass
class Followed:
    """A terminal request whose session's transcript file is followed."""

    request: ApprovalRequest
    path: Path
    follower: TranscriptFollower
    process: asyncio.subprocess.Process


@pytest_asyncio.fixture
async def followed(rig: TerminalRig, isolated_home: Path) -> AsyncIterator[Followed]:
    session_id = "flood-session"
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(rig.workspace))
    path = isolated_home / ".claude" / "projects" / slug / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(_line({"type": "user", "message": {"role": "user",
                                                          "content": "Build it."}})
                     + _call("toolu_build"))
    event = {"hook_event_name": "PermissionRequest", "session_id": session_id,
             "cwd": str(rig.workspace), "transcript_path": str(path),
             "permission_mode": "default", "tool_name": "Bash", "tool_input": CALL}
    process = await start_hook(event, quiet=True)
    request = await rig.next_request()
    follower = rig.server.transcript_follower(request.session_id)
    assert follower is not None
    await _shown(rig, request.session_id, "make release")
    try:
        yield Followed(request, path, follower, process)
    finally:
        if rig.broker.is_pending(request.request_id):
            rig.broker.answer(request.request_id, Decision.deny("Done testing."))
        await asyncio.wait_for(process.wait(), TIMEOUT)


async def _shown(rig: TerminalRig, session_id: str, text: str) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not any(text in line.text for line in rig.hub.transcript(session_id)):
            await asyncio.sleep(0.02)


async def _caught_up(follower: TranscriptFollower, path: Path) -> None:
    async with asyncio.timeout(TIMEOUT):
        while follower.offset < path.stat().st_size or follower.behind:
            await asyncio.sleep(0.02)


def _notes(rig: TerminalRig, session_id: str) -> list[str]:
    return [line.text for line in rig.hub.transcript(session_id)
            if re.fullmatch(r"… \d+ lines? skipped", line.text)]


def _report(what: str, ticker: Ticker, follower: TranscriptFollower) -> None:
    """The measured figures (printed, never asserted: the machine may be busy)."""
    print(f"\n{what}: lines in {len(ticker.turns_with_lines)} of {ticker.ticks} loop ticks, "
          f"{follower.reads} slices read; longest gap between "
          f"ticks {ticker.longest * 1000:.1f} ms, longest poll "
          f"{follower.longest_poll * 1000:.1f} ms; {follower.skipped} lines skipped")


async def _answered_in_terminal(rig: TerminalRig, followed: Followed) -> None:
    """The person answers Yes in the terminal: the dialog closes (the follower still works)."""
    with followed.path.open("ab") as stream:
        stream.write(_line({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_build", "type": "tool_result", "content": "built"}]}}))
    _event, finished, decision = await rig.next_finished()
    assert finished.request_id == followed.request.request_id
    assert decision is not None and decision.message == "Answered in the terminal."


@pytest.mark.parametrize("width", [120, 1], ids=["lines", "tiny-lines"])
@pytest.mark.asyncio
async def test_four_mib_appended_at_once_is_read_in_slices_and_skipped(
        rig: TerminalRig, followed: Followed, width: int) -> None:
    data = _flood(4 * MIB, "burst", width) + _text("the last line")
    with Ticker(rig.hub, followed.request.session_id) as ticker:
        await asyncio.to_thread(lambda: followed.path.open("ab").write(data))
        await _shown(rig, followed.request.session_id, "the last line")
    # Read over many loop turns, the loop turning in between, never all in one turn.
    assert len(ticker.turns_with_lines) >= 3
    # A skip note says so (two when a poll lands while the write is still going on).
    assert 1 <= len(_notes(rig, followed.request.session_id)) <= 2
    _report(f"4 MiB at once ({width}-character lines)", ticker, followed.follower)
    assert followed.follower.skipped > 10_000  # most of it was counted, not parsed
    assert rig.broker.is_pending(followed.request.request_id)
    await _answered_in_terminal(rig, followed)


@pytest.mark.asyncio
async def test_a_steady_stream_never_holds_up_the_loop(
        rig: TerminalRig, followed: Followed) -> None:
    chunk = _flood(256 * 1024, "stream")
    done = threading.Event()

    def write() -> None:  # about 10 MiB/s for 1.5 s, as another process could
        with followed.path.open("ab") as stream:
            for _ in range(60):
                stream.write(chunk)
                stream.flush()
                if done.wait(0.025):
                    return
            stream.write(_text("the stream ended"))

    with Ticker(rig.hub, followed.request.session_id) as ticker:
        try:
            await asyncio.to_thread(write)
        finally:
            done.set()
        await _shown(rig, followed.request.session_id, "the stream ended")
    assert len(ticker.turns_with_lines) >= 4
    assert _notes(rig, followed.request.session_id)
    _report("15 MiB stream", ticker, followed.follower)
    assert len(rig.hub.transcript(followed.request.session_id)) < 20_000
    await _answered_in_terminal(rig, followed)


@pytest.mark.asyncio
async def test_one_huge_line_is_never_held_whole(rig: TerminalRig, followed: Followed) -> None:
    """A 3 MiB result line with no newline for a long while, written as it grows: the
    follower keeps at most `MAX_LINE` of it, says it is not shown, and the result still
    tells that the person answered in the terminal."""
    head = (b'{"type":"user","message":{"role":"user","content":[{"tool_use_id":'
            b'"toolu_build","type":"tool_result","content":"')
    held = 0
    with Ticker(rig.hub, followed.request.session_id) as ticker:
        with followed.path.open("ab") as stream:
            stream.write(head)
            for _ in range(24):  # 3 MiB, 128 KiB at a time, each seen by the follower
                stream.write(b"y" * 128 * 1024)
                stream.flush()
                await _caught_up(followed.follower, followed.path)
                held = max(held, followed.follower.buffered)
            stream.write(b'"}]}}\n' + _text("after the huge line"))
        _event, finished, decision = await rig.next_finished()
        await _shown(rig, followed.request.session_id, "after the huge line")
    _report(f"3 MiB line (held at most {held} bytes)", ticker, followed.follower)
    assert 0 < held <= MAX_LINE
    assert finished.request_id == followed.request.request_id
    assert decision is not None and decision.message == "Answered in the terminal."
    assert any(line.text.startswith("… a result of 3,1")
               for line in rig.hub.transcript(followed.request.session_id))
