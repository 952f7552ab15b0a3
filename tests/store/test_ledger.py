"""The decision ledger: durable writes, crash safety and export."""

from __future__ import annotations

import csv
import ctypes
import ctypes.util
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RequestKind,
    RuleBehavior,
    RuleValue,
    SessionInfo,
)
from qoder_desktop.store.database import PAGE_CACHE_KIB, Database
from qoder_desktop.store.ledger import (
    Ledger,
    LedgerEntry,
    LedgerError,
    ToolEventPhase,
    ledger_entries,
)
from qoder_desktop.store.ledger_export import (
    EXPORT_COLUMNS,
    export_ledger,
    ledger_export_main,
    ledger_main,
)

QUESTION = "Which checks should run, and how?"
LABELS = ["Lint, then format", "Unit tests"]


def _bash_request(command: str = "npm run test", session: str = "s1") -> ApprovalRequest:
    return ApprovalRequest(
        session_id=session, session_name="Demo", backend=Backend.CLAUDE, tool_name="Bash",
        tool_input={"command": command, "description": "Run tests — ünïcode"},
        title="Run a shell command", decision_reason="no rule matched", tool_use_id="toolu_1",
        suggestions=(PermissionSuggestion(
            type="addRules", rules=(RuleValue.parse("Bash(npm run test:*)"),),
            behavior=RuleBehavior.ALLOW, destination="localSettings"),),
        cwd="/tmp/work")


def _question_request() -> ApprovalRequest:
    return ApprovalRequest(
        session_id="s1", backend=Backend.QODER, tool_name="AskUserQuestion",
        tool_input={"questions": [{"question": QUESTION, "header": "Checks",
                                   "multiSelect": True,
                                   "options": [{"label": LABELS[0], "description": "a"},
                                               {"label": LABELS[1], "description": "b"},
                                               {"label": "Lint", "description": "c"}]}]})


def _answer_question(ledger: Ledger) -> tuple[ApprovalRequest, Decision]:
    req = _question_request()
    ledger.record_request(req)
    final = {**req.tool_input, "answers": {QUESTION: ", ".join(LABELS)}}
    decision = Decision.allow_once(final, answer_labels={QUESTION: tuple(LABELS)})
    ledger.record_decision(req, decision, 1234.5)
    return req, decision


def test_round_trip_through_a_real_file(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    req = _bash_request()
    grant = PermissionSuggestion(type="addRules", rules=(RuleValue.parse("Bash(npm run:*)"),),
                                 behavior=RuleBehavior.ALLOW, destination="session")
    edited = {"command": "npm run test -- --ci", "description": "Run tests — ünïcode"}
    decision = Decision.allow_session(edited, (grant,))
    with Database.open(path) as db:
        ledger = Ledger(db)
        ledger.record_request(req)
        assert ledger.pending() and ledger.pending()[0].entry_id == req.request_id
        ledger.record_decision(req, decision, 87.25)

    with Database.open(path) as db:
        [entry] = ledger_entries(db)
    assert entry == LedgerEntry(
        entry_type="approval", entry_id=req.request_id, session_id="s1", session_name="Demo",
        backend=Backend.CLAUDE, request_kind=RequestKind.TOOL, tool_name="Bash",
        tool_use_id="toolu_1", title="Run a shell command",
        decision_reason="no rule matched", cwd="/tmp/work",
        suggestions=[s.to_wire() for s in req.suggestions], original_input=req.tool_input,
        recorded_at=entry.recorded_at, received_at=req.received_at,
        outcome=DecisionKind.ALLOW_SESSION, decided_by=DecidedBy.USER, final_input=edited,
        message=None, interrupt=False, latency_ms=87.25, matched_rule=None,
        granted_updates=[grant.to_wire()], answer_labels=None,
        decided_at=decision.decided_at)
    assert entry.status == "allow_session" and not entry.pending


def test_deny_rule_cli_grant_and_withdrawn_outcomes_say_who_decided(db: Database) -> None:
    ledger = Ledger(db)
    denied, by_rule, by_cli, gone = (_bash_request("rm -rf /"), _bash_request("rm x"),
                                     _bash_request("ls"), _bash_request())
    for req in (denied, by_rule, gone):
        ledger.record_request(req)
    ledger.record_decision(denied, Decision.deny("too risky", interrupt=True), 10)
    ledger.record_decision(by_rule, Decision.deny("Denied by the session rule Bash(rm *).",
                                                  by=DecidedBy.SESSION_RULE,
                                                  rule="Bash(rm *)"), 0.4)
    ledger.record_rule_allowed(by_cli, "Bash(ls)")  # (seen only through its hooks)
    ledger.record_decision(gone, Decision.withdrawn(), 5000)
    entries = {e.entry_id: e for e in ledger.entries()}
    assert entries[denied.request_id].outcome is DecisionKind.DENY_INTERRUPT
    assert entries[denied.request_id].interrupt is True
    assert entries[denied.request_id].message == "too risky"
    assert entries[denied.request_id].final_input is None
    assert entries[denied.request_id].who == "you"
    assert entries[by_rule.request_id].decided_by is DecidedBy.SESSION_RULE
    assert entries[by_rule.request_id].who == "denied by the session rule Bash(rm *)"
    cli = entries[by_cli.request_id]
    assert (cli.outcome, cli.decided_by, cli.matched_rule) == (
        DecisionKind.ALLOW_ONCE, DecidedBy.CLI, "Bash(ls)")
    assert cli.message == ("Run by the agent's CLI under its session grant; we read it as "
                           "Bash(ls).")
    assert cli.who == "the agent's CLI, under its session grant (we read it as Bash(ls))"
    assert entries[gone.request_id].status == "withdrawn"
    assert entries[gone.request_id].who == "nobody: withdrawn before an answer"


def test_an_older_ledgers_allow_by_a_session_rule_still_reads(db: Database) -> None:
    """Rows written before only a person or the CLI could allow keep their meaning."""
    ledger = Ledger(db)
    req = _bash_request("ls")
    ledger.record_request(req)
    db.execute("UPDATE approvals SET outcome = 'allow_once', decided_by = 'session_rule', "
               "matched_rule = 'Bash(ls)', final_input_json = '{}' WHERE request_id = ?",
               (req.request_id,), what="an older row")
    [entry] = ledger.entries()
    assert entry.decided_by is DecidedBy.SESSION_RULE
    assert entry.who == "allowed under the session rule Bash(ls) (an older record)"


def test_a_request_is_decided_once(db: Database) -> None:
    ledger = Ledger(db)
    req = _bash_request()
    ledger.record_request(req)
    ledger.record_request(req)  # a repeat is harmless
    ledger.record_decision(req, Decision.deny("no"))
    with pytest.raises(LedgerError, match="already has a decision"):
        ledger.record_decision(req, Decision.allow_once(req.tool_input))
    [entry] = ledger.entries()
    assert entry.outcome is DecisionKind.DENY


def test_decision_without_prior_request_row_is_still_recorded(db: Database) -> None:
    req = _bash_request()
    Ledger(db).record_decision(req, Decision.error("adapter failed"))
    [entry] = ledger_entries(db)
    assert entry.outcome is DecisionKind.ERROR and entry.original_input == req.tool_input


def test_tool_events_are_in_the_ledger_in_order(db: Database) -> None:
    ledger = Ledger(db)
    ledger.record_tool_event("s1", "toolu_0", "Read", {"file_path": "/x"}, "PreToolUse")
    req = _bash_request()
    ledger.record_request(req)
    ledger.record_tool_event("s2", "toolu_9", "Bash", {"command": "ls"},
                             ToolEventPhase.PERMISSION_DENIED, detail="denied by rule")
    ledger.record_decision(req, Decision.deny("no"))
    ledger.record_tool_event("s1", "toolu_0", "Read", {"file_path": "/x"},
                             ToolEventPhase.POST_TOOL_USE)
    kinds = [(e.entry_type, e.status) for e in ledger.entries()]
    assert kinds == [("tool_event", "PreToolUse"), ("approval", "deny"),
                     ("tool_event", "PermissionDenied"), ("tool_event", "PostToolUse")]
    assert [e.tool_name for e in ledger.entries("s2")] == ["Bash"]
    assert ledger.entries("s2")[0].detail == "denied by rule"
    assert ledger.entries(include_tool_events=False)[0].entry_type == "approval"
    with pytest.raises(ValueError):
        ledger.record_tool_event("s1", None, "Read", {}, "NotAHook")


CRASHING_WRITER = textwrap.dedent("""
    import os, signal, sys
    from qoder_desktop.store.ledger import Ledger
    from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision
    from qoder_desktop.store.database import Database

    db = Database.open(sys.argv[1])
    ledger = Ledger(db)
    first = ApprovalRequest(request_id="req-1", session_id="s1", backend=Backend.CLAUDE,
                            tool_name="Bash", tool_input={"command": "ls"})
    second = ApprovalRequest(request_id="req-2", session_id="s1", backend=Backend.CLAUDE,
                             tool_name="Write", tool_input={"file_path": "/tmp/x"})
    ledger.record_request(first)
    ledger.record_decision(first, Decision.allow_once(first.tool_input), 12.0)
    ledger.record_request(second)
    print("waiting for a person", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_killed_process_keeps_answered_decisions(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    proc = subprocess.run([sys.executable, "-c", CRASHING_WRITER, str(path)],
                          capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "waiting for a person" in proc.stdout
    assert Path(f"{path}-wal").exists()  # nothing was checkpointed on a clean close

    with Database.open(path) as db:
        entries = {e.entry_id: e for e in ledger_entries(db)}
        assert entries["req-1"].outcome is DecisionKind.ALLOW_ONCE
        assert entries["req-1"].final_input == {"command": "ls"}
        assert entries["req-1"].latency_ms == 12.0
        assert entries["req-2"].pending and entries["req-2"].status == "pending"
        assert [e.entry_id for e in Ledger(db).pending()] == ["req-2"]


def test_csv_export_round_trips_labels_with_commas(db: Database) -> None:
    ledger = Ledger(db)
    req, _ = _answer_question(ledger)
    ledger.record_tool_event("s1", "toolu_5", "Read", {"file_path": "/x"}, "PreToolUse")
    out = io.StringIO()
    assert export_ledger(db, out, "csv") == 2
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0].keys()) == list(EXPORT_COLUMNS)
    question = next(r for r in rows if r["entry_type"] == "approval")
    assert question["entry_id"] == req.request_id
    assert question["request_kind"] == "question"
    assert question["status"] == "allow_once"
    assert question["interrupt"] == "false"
    assert json.loads(question["answer_labels"]) == {QUESTION: LABELS}
    # the SDK's own encoding is ambiguous; the stored labels are not
    assert json.loads(question["final_input"])["answers"][QUESTION] == \
        "Lint, then format, Unit tests"
    assert json.loads(question["original_input"]) == req.tool_input
    event = next(r for r in rows if r["entry_type"] == "tool_event")
    assert event["phase"] == "PreToolUse" and event["outcome"] == ""


def test_jsonl_export_one_object_per_line(db: Database) -> None:
    ledger = Ledger(db)
    _answer_question(ledger)
    other = _bash_request(session="s2")
    ledger.record_request(other)
    out = io.StringIO()
    export_ledger(db, out, "jsonl")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    records = [json.loads(line) for line in lines]
    assert records[0]["answer_labels"] == {QUESTION: LABELS}
    assert records[0]["latency_ms"] == 1234.5
    assert records[1]["status"] == "pending"
    assert "ü" in lines[1]  # UTF-8, not \\u escapes
    only = io.StringIO()
    export_ledger(db, only, "jsonl", session_id="s2")
    assert [json.loads(x)["session_id"] for x in only.getvalue().splitlines()] == ["s2"]
    with pytest.raises(ValueError):
        export_ledger(db, io.StringIO(), "xml")  # type: ignore[arg-type]


def test_export_cli_writes_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = AppPaths.default().ensure()
    with Database.open(paths.database) as db:
        _answer_question(Ledger(db))
    target = tmp_path / "out.jsonl"
    assert ledger_export_main(["ledger", "export", "--format", "jsonl",
                               "--output", str(target)]) == 0
    assert json.loads(target.read_text(encoding="utf-8"))["answer_labels"] == {
        QUESTION: LABELS}
    assert os.stat(target).st_mode & 0o077 == 0
    assert ledger_export_main(["--format", "csv", "--session", "s1"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("entry_type,entry_id,")
    assert ledger_export_main(["--format", "csv", "--session", "nobody"]) == 2
    unknown = capsys.readouterr()
    assert unknown.out == ""  # no bare header that looks like an empty session
    assert "no session 'nobody' in the ledger" in unknown.err


def test_export_on_a_fresh_install_is_empty_and_succeeds(tmp_path: Path) -> None:
    """The real `qoder-desktop ledger export` before anything was recorded: exit 0."""
    home = tmp_path / "fresh-home"
    env = dict(os.environ, QODER_DESKTOP_HOME=str(home))

    def export(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "qoder_desktop", "ledger", "export", *args],
                              env=env, capture_output=True, text=True, timeout=60, check=False)

    csv_run = export("--format", "csv")
    assert csv_run.returncode == 0, csv_run.stderr
    assert csv_run.stdout.splitlines() == [",".join(EXPORT_COLUMNS)]
    assert "nothing recorded yet" in csv_run.stderr
    jsonl_run = export("--format", "jsonl")
    assert (jsonl_run.returncode, jsonl_run.stdout) == (0, "")
    target = tmp_path / "out.csv"
    assert export("--output", str(target)).returncode == 0
    assert target.read_text(encoding="utf-8").splitlines() == [",".join(EXPORT_COLUMNS)]
    assert not home.exists()  # exporting creates no database


def test_export_to_an_unwritable_file_fails_plainly(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert ledger_export_main(["--output", str(tmp_path / "missing" / "out.csv")]) == 1
    assert "ledger export failed" in capsys.readouterr().err


def test_export_cli_with_a_damaged_database(capsys: pytest.CaptureFixture[str]) -> None:
    paths = AppPaths.default().ensure()
    paths.database.write_bytes(b"garbage" * 1000)
    assert ledger_export_main(["--format", "jsonl"]) == 1
    assert str(paths.database) in capsys.readouterr().err


def test_ledger_command_dispatch(capsys: pytest.CaptureFixture[str]) -> None:
    paths = AppPaths.default().ensure()
    with Database.open(paths.database) as db:
        Ledger(db).record_request(_bash_request())
    assert ledger_main(["export", "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "pending"
    assert ledger_main([]) == 2
    assert "missing ledger command" in capsys.readouterr().err
    assert ledger_main(["import"]) == 2
    assert "unknown ledger command 'import'" in capsys.readouterr().err
    assert ledger_main(["--help"]) == 0
    assert "ledger export" in capsys.readouterr().out


def _sqlite_memory_used() -> int:
    """Bytes SQLite holds in this process (its own allocator's count)."""
    library = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")
    library.sqlite3_memory_used.restype = ctypes.c_int64
    return int(library.sqlite3_memory_used())


def test_a_long_run_of_ledger_writes_keeps_sqlites_page_cache_small(db: Database) -> None:
    """Pages a ledger write touched once stayed cached up to SQLite's default 2 MB (the
    soak's ~2,000 requests); the store's connection keeps `PAGE_CACHE_KIB`."""
    ledger = Ledger(db)
    db.execute("PRAGMA synchronous = OFF")  # the cache fills the same without the syncs
    before = _sqlite_memory_used()
    for number in range(2_500):
        if number % 25 == 0:
            session = SessionInfo(name=f"agent {number}", backend=Backend.EXTERNAL, cwd="/w")
            db.upsert_session(session)
        request = ApprovalRequest(session_id=session.session_id, session_name=session.name,
                                  backend=Backend.EXTERNAL, tool_name="Bash",
                                  tool_input={"command": f"make target-{number}"})
        ledger.record_request(request)
        ledger.record_decision(request, Decision.deny("no"), 12.0)
    assert _sqlite_memory_used() - before < (PAGE_CACHE_KIB + 400) * 1024
