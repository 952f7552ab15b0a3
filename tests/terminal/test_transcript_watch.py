"""The hook's own watch on its transcript (what a remote host's hook runs while the desk
asks): it finds its call in the last part of the file only, and tells when the call's
result is written after the hook started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qoder_desktop.terminal.transcript_watch import (
    LOOKBACK,
    MAX_LINE,
    TranscriptWatch,
    size_now,
    transcript_of,
)

CALL = {"command": "make deploy"}


def line(entry: dict[str, Any]) -> str:
    return json.dumps(entry) + "\n"


def tool_use(tool_use_id: str) -> str:
    return line({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": tool_use_id, "name": "Bash", "input": CALL}]}})


def tool_result(tool_use_id: str, padding: int = 0) -> str:
    return line({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": tool_use_id, "content": "x" * padding}]}})


def transcript(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "projects" / "-srv-project" / "abc.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as stream:
        stream.write(text)


def test_a_long_history_is_not_read_and_the_answer_is_seen(tmp_path: Path) -> None:
    history = line({"type": "user", "message": {"content": "y" * 1000}}) * 8000  # ~8 MiB
    path = transcript(tmp_path, history + tool_use("toolu_ours"))
    watch = TranscriptWatch(str(path), "Bash", CALL, size_now(str(path)))

    assert watch.call_id == "toolu_ours"
    assert not watch.poll()
    append(path, tool_result("toolu_other") + tool_result("toolu_ours"))
    assert watch.poll()
    assert watch.bytes_read < LOOKBACK + 4096  # the window and what came after


def test_a_result_in_a_line_too_long_to_parse_is_still_seen(tmp_path: Path) -> None:
    path = transcript(tmp_path, tool_use("toolu_ours"))
    watch = TranscriptWatch(str(path), "Bash", CALL, size_now(str(path)))

    append(path, tool_result("toolu_ours", padding=MAX_LINE + 10))

    while not watch.poll() and watch.offset < path.stat().st_size:
        pass
    assert watch.answered


def test_a_result_written_before_the_hook_started_is_an_earlier_call(tmp_path: Path) -> None:
    path = transcript(tmp_path, tool_use("toolu_old") + tool_result("toolu_old"))
    started = size_now(str(path))
    append(path, tool_use("toolu_ours"))  # the CLI writes the call; the watch starts later
    watch = TranscriptWatch(str(path), "Bash", CALL, started)
    assert watch.call_id is None  # not found yet: only what is new is ours

    assert not watch.poll()
    assert watch.call_id == "toolu_ours"
    append(path, tool_result("toolu_ours"))
    assert watch.poll()


def test_only_a_transcript_named_for_the_session_is_watched(tmp_path: Path) -> None:
    good = "/home/me/.claude/projects/-srv/abc.jsonl"
    assert transcript_of({"session_id": "abc", "transcript_path": good}) == good
    for path in ("/home/me/.ssh/id_ed25519", "/home/me/.claude/projects/-srv/other.jsonl",
                 "relative/projects/-srv/abc.jsonl",
                 "/home/me/.claude/projects/-srv/../x/abc.jsonl"):
        assert transcript_of({"session_id": "abc", "transcript_path": path}) is None
