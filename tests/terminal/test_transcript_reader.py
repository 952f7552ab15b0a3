"""Reading a terminal session's transcript file a slice at a time: the lines become what
the person sees (prompts, text, tool calls and results), a result tells which call got
its answer in the terminal, and a file that grows too fast, a line too long, a replaced
file or a symlink never hold up or fool the reader."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.terminal.transcript_reader import (
    BACKLOG_LIMIT,
    MAX_LINE,
    TAIL_LINES,
    TranscriptReader,
    skipped_note,
)


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}}


def tool_use(tool_use_id: str, command: str) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": tool_use_id, "name": "Bash", "input": {"command": command}}]}}


def tool_result(tool_use_id: str, output: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_use_id, "content": output}]}}


class Rig:
    """A transcript file the test appends to, and a reader polled until it is caught up."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "session.jsonl"
        self.path.write_bytes(b"")
        self.events: list[TranscriptEvent] = []
        self.results: list[tuple[str, dict[str, Any]]] = []
        self.reader = TranscriptReader(self.path, "s-1", self.events.append,
                                       lambda name, tool_input: self.results.append(
                                           (name, tool_input)))

    def append(self, *entries: dict[str, Any] | bytes) -> None:
        with self.path.open("ab") as file:
            for entry in entries:
                file.write(entry if isinstance(entry, bytes)
                           else json.dumps(entry).encode() + b"\n")

    def catch_up(self) -> None:
        for _ in range(10_000):
            self.reader.poll()
            if not self.reader.behind:
                return
        raise AssertionError("the reader never caught up")

    def shown(self) -> list[tuple[TranscriptKind, str]]:
        return [(event.kind, event.text) for event in self.events]


def test_lines_become_what_the_person_sees(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.append(user("list the files"), tool_use("toolu_1", "ls -la"),
               tool_result("toolu_1", "a.txt"))
    rig.catch_up()
    kinds = [kind for kind, _ in rig.shown()]
    assert kinds == [TranscriptKind.USER_PROMPT, TranscriptKind.ASSISTANT_TEXT,
                     TranscriptKind.TOOL_CALL, TranscriptKind.TOOL_RESULT]
    assert rig.shown()[0][1] == "list the files"
    assert "ls -la" in rig.shown()[2][1]
    assert rig.events[3].tool_use_id == "toolu_1"
    assert rig.results == [("Bash", {"command": "ls -la"})]


def test_a_line_is_read_once_it_is_complete(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    line = json.dumps(user("half a line")).encode()
    rig.append(line[:10])
    rig.catch_up()
    assert rig.events == [] and rig.reader.buffered == 10
    rig.append(line[10:] + b"\n")
    rig.catch_up()
    assert rig.shown() == [(TranscriptKind.USER_PROMPT, "half a line")]


def test_lines_that_are_not_the_conversation_are_left_out(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.append(b"not json\n", b"\n", {**user("a side agent"), "isSidechain": True},
               {**user("meta"), "isMeta": True}, {"type": "summary"}, user("shown"))
    rig.catch_up()
    assert rig.shown() == [(TranscriptKind.USER_PROMPT, "shown")]


def test_a_file_that_grows_too_fast_is_skipped_to_its_tail_results_still_noted(
        tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.append(tool_use("toolu_old", "make"))
    rig.catch_up()
    filler = json.dumps(user("x" * 200)).encode() + b"\n"
    count = BACKLOG_LIMIT // len(filler) + TAIL_LINES
    rig.append(tool_result("toolu_old", "done"), filler * count)
    rig.catch_up()
    notes = [text for kind, text in rig.shown() if kind is TranscriptKind.SYSTEM]
    skipped = count + 1 - TAIL_LINES
    assert notes == [skipped_note(skipped)]
    assert rig.reader.skipped == skipped
    assert sum(kind is TranscriptKind.USER_PROMPT for kind, _ in rig.shown()) == TAIL_LINES
    assert rig.results == [("Bash", {"command": "make"})]  # answered in the terminal


def test_a_line_too_long_is_named_not_held(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    line = json.dumps(user("y" * (MAX_LINE + 10))).encode() + b"\n"
    piece = BACKLOG_LIMIT // 2
    for start in range(0, len(line), piece):  # written as fast as the reader keeps up
        rig.append(line[start:start + piece])
        rig.catch_up()
        assert rig.reader.buffered <= MAX_LINE
    rig.append(user("after"))
    rig.catch_up()
    assert rig.reader.buffered == 0
    assert rig.shown()[-1] == (TranscriptKind.USER_PROMPT, "after")
    assert rig.shown()[0][0] is TranscriptKind.SYSTEM
    assert "bytes not shown" in rig.shown()[0][1]


def test_a_replaced_file_is_read_from_its_start(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.append(user("first file"), user("more"))
    rig.catch_up()
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(json.dumps(user("second file")).encode() + b"\n")
    os.replace(replacement, rig.path)
    rig.catch_up()
    assert rig.shown()[-1] == (TranscriptKind.USER_PROMPT, "second file")


def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(json.dumps(user("secret")).encode() + b"\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    events: list[TranscriptEvent] = []
    reader = TranscriptReader(link, "s-1", events.append)
    assert reader.poll() == 0
    assert events == []
