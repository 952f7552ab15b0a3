"""Session binding on its own: which transcript paths are the CLI's own, and which app
session a request lands in (real files, real processes; the hook server tests cover the
same through the socket)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qoder_desktop.terminal.binding import (
    Binding,
    CliProcess,
    SessionBindings,
    checked_transcript,
    slug,
)


def _ended_process() -> CliProcess:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return CliProcess(process.pid, 1, None, {})


def _this_process() -> CliProcess:
    with open(f"/proc/{os.getpid()}/stat") as stream:
        started = int(stream.read().rsplit(")", 1)[1].split()[19])
    return CliProcess(os.getpid(), started, os.getcwd(), {})


def test_the_slug_is_the_clis_folder_name() -> None:
    # Measured with the real CLI: /tmp/tmpngb9ie_k/ws/sub -> -tmp-tmpngb9ie-k-ws-sub
    assert slug("/tmp/tmpngb9ie_k/ws/sub") == "-tmp-tmpngb9ie-k-ws-sub"
    assert slug("/home/zoë/my project") == "-home-zo--my-project"


@pytest.mark.parametrize("claude_config_dir", [False, True])
def test_only_the_clis_own_file_is_a_transcript(tmp_path: Path, isolated_home: Path,
                                                claude_config_dir: bool) -> None:
    cwd = tmp_path / "work" / "app"
    cwd.mkdir(parents=True)
    config = tmp_path / "cfg" if claude_config_dir else isolated_home / ".claude"
    environ = {"HOME": str(isolated_home),
               **({"CLAUDE_CONFIG_DIR": str(config)} if claude_config_dir else {})}
    right = config / "projects" / slug(str(cwd)) / "s-1.jsonl"
    right.parent.mkdir(parents=True)
    right.write_text("")
    assert checked_transcript("claude", "s-1", str(cwd), str(right), None, environ) == right
    # the CLI started in a folder above the one the agent has since moved to
    assert checked_transcript("claude", "s-1", str(cwd / "src"), str(right), None,
                              environ) == right
    wrong = [str(right.with_name("s-2.jsonl")), str(right) + "/../s-1.jsonl",
             str(tmp_path / "elsewhere" / slug(str(cwd)) / "s-1.jsonl")]
    for path in wrong:
        assert checked_transcript("claude", "s-1", str(cwd), path, None, environ) is None
    assert checked_transcript("claude", "s-1", str(tmp_path / "other"), str(right), None,
                              environ) is None  # named for another folder
    assert checked_transcript("qoder", "s-1", str(cwd), str(right), None, environ) is None
    assert checked_transcript("claude", "../s-1", str(cwd), str(right), None, environ) is None


def test_qodercli_transcripts_live_under_dot_qoder(tmp_path: Path, isolated_home: Path) -> None:
    cwd = tmp_path / "repo"
    cwd.mkdir()
    path = isolated_home / ".qoder" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd)) / (
        "q-1.jsonl")
    path.parent.mkdir(parents=True)
    path.write_text("")
    environ = {"HOME": str(isolated_home)}
    assert checked_transcript("qoder", "q-1", str(cwd), str(path), None, environ) == path


def test_a_request_from_another_process_gets_its_own_session() -> None:
    bindings = SessionBindings()
    mine, other = _this_process(), CliProcess(os.getpid(), 7, None, {})
    transcript = Path("/home/u/.claude/projects/-w/S.jsonl")
    assert bindings.resolve("S", Binding("claude", transcript, mine)) == "S"
    assert bindings.resolve("S", Binding("claude", None, mine)) == "S"  # same process
    assert bindings.resolve("S", Binding("claude", transcript, other)) == "S~2"
    assert bindings.resolve("S", Binding("qoder", transcript, mine)) == "S~3"
    # a claimed id never lands in a session given out before
    assert bindings.resolve("S~2", Binding("claude", None, mine)) == "S~2~2"


def test_a_resumed_session_takes_the_binding_of_its_ended_cli() -> None:
    bindings = SessionBindings()
    transcript = Path("/home/u/.claude/projects/-w/S.jsonl")
    assert bindings.resolve("S", Binding("claude", transcript, _ended_process())) == "S"
    assert bindings.resolve("S", Binding("claude", transcript, _this_process())) == "S"
    # but not while the bound CLI still runs, nor with another transcript
    assert bindings.resolve("S", Binding("claude", transcript,
                                         CliProcess(os.getpid(), 7, None, {}))) == "S~2"
    assert bindings.resolve("T", Binding("claude", transcript, _ended_process())) == "T"
    assert bindings.resolve("T", Binding("claude", None, _this_process())) == "T~2"


def test_without_peer_credentials_the_transcript_decides() -> None:
    bindings = SessionBindings()
    transcript = Path("/home/u/.claude/projects/-w/S.jsonl")
    assert bindings.resolve("S", Binding("claude", transcript, None)) == "S"
    assert bindings.resolve("S", Binding("claude", transcript, None)) == "S"
    assert bindings.resolve("S", Binding("claude", None, None)) == "S~2"
