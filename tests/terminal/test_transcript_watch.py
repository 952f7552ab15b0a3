"""The hook's own watch on its transcript (what a remote host's hook runs while the desk
asks): it finds its call in the last part of the file only, tells when the call's
result is written after the hook started, and keeps only recent lines for the desk; the
desk shows each streamed line once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qoder_desktop.domain.session_options import TranscriptEvent
from qoder_desktop.terminal import protocol
from qoder_desktop.terminal.remote_transcript import GAP_NOTE, RemoteTranscripts
from qoder_desktop.terminal.transcript_watch import (
    LOOKBACK,
    MAX_LINE,
    STREAM_LINE,
    STREAM_RECENT,
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


def test_only_the_recent_lines_and_what_comes_after_are_kept_for_the_desk(
        tmp_path: Path) -> None:
    history = "".join(line({"type": "user", "message": {"content": f"p{n}"}})
                      for n in range(STREAM_RECENT * 3))
    path = transcript(tmp_path, history + tool_use("toolu_ours"))
    watch = TranscriptWatch(str(path), "Bash", CALL, size_now(str(path)), stream_from=0)

    first = watch.take_lines()
    assert len(first) == STREAM_RECENT
    assert '"toolu_ours"' in first[-1]["text"]
    append(path, tool_result("toolu_ours", padding=STREAM_LINE))
    while not watch.poll() and watch.offset < path.stat().st_size:
        pass  # a poll reads a bounded slice of a long line
    assert watch.answered
    [result] = watch.take_lines()
    assert result["cut"] is True and result["size"] > STREAM_LINE
    assert len(result["text"]) < STREAM_LINE  # only its head goes over the wire
    assert result["at"] == first[-1]["at"] + first[-1]["size"] + 1


def test_lines_the_desk_already_shows_are_not_kept_again(tmp_path: Path) -> None:
    path = transcript(tmp_path, tool_use("toolu_one") + tool_use("toolu_ours"))
    shown = len(tool_use("toolu_one"))
    watch = TranscriptWatch(str(path), "Bash", CALL, size_now(str(path)), stream_from=shown)

    assert [item["at"] for item in watch.take_lines()] == [shown]


def test_the_desk_shows_each_streamed_line_once_and_drops_malformed_ones() -> None:
    events: list[TranscriptEvent] = []
    transcripts = RemoteTranscripts(events.append)
    first = line({"type": "user", "message": {"content": "hello"}})[:-1]
    second = line({"type": "user", "message": {"content": "again"}})[:-1]
    lines = [{"at": 100, "size": len(first), "text": first},
             {"at": 101 + len(first), "size": len(second), "text": second}]

    assert transcripts.take("s", lines) == 2
    assert transcripts.take("s", lines) == 0  # a second hook of the session sends them too
    assert transcripts.take("s", [{"at": -1, "size": 1, "text": "x"}, "x", None,
                                  {"at": True, "size": 1, "text": "x"}]) == 0
    assert transcripts.take("s", "not a list") == 0

    assert [event.text for event in events] == [GAP_NOTE, "hello", "again"]
    assert transcripts.shown_up_to("s") == 102 + len(first) + len(second)


def test_a_message_for_the_desk_stays_below_the_protocols_line_limit(tmp_path: Path) -> None:
    escaped = "\x01" * (STREAM_LINE - 200)  # each character is sent as \u0001
    path = transcript(tmp_path, tool_use("toolu_ours"))
    watch = TranscriptWatch(str(path), "Bash", CALL, size_now(str(path)), stream_from=0)
    watch.take_lines()
    for _ in range(20):
        append(path, line({"type": "user", "message": {"content": escaped}}))
    while watch.offset < path.stat().st_size:
        watch.poll()

    sent = 0
    while lines := watch.take_lines():
        assert len(protocol.encode({"type": "transcript", "lines": lines})) < protocol.MAX_LINE
        sent += len(lines)
    assert sent == 20
