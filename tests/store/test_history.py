"""The history's query side on a real SQLite file of 100,000 requests: pages, filters,
totals, a row's rules, and the export of a filter with the ledger export's writer."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.ledger_rows import GRANT, MARKER, MARKER_EVERY, fill_ledger, session_id
from qoder_desktop.domain.history import PENDING, THIS_COMPUTER, HistoryFilter, since_for
from qoder_desktop.store.database import Database
from qoder_desktop.store.history import (
    HistoryQueries,
    HistoryReader,
    connect_read_only,
    export_history,
)
from qoder_desktop.store.ledger_export import EXPORT_COLUMNS, export_ledger
from qoder_desktop.store.schema import MIGRATIONS

COUNT = 100_000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger of 100,000 requests over 8 sessions (written once for the module)."""
    return fill_ledger(tmp_path_factory.mktemp("history") / "ledger.sqlite3", COUNT)


@pytest.fixture
def queries(big: Path) -> HistoryQueries:
    return HistoryQueries(connect_read_only(big))


def _all_outcomes(big: Path) -> Counter[tuple[str | None, str | None]]:
    conn = sqlite3.connect(big)
    try:
        return Counter(conn.execute("SELECT outcome, decided_by FROM approvals"))
    finally:
        conn.close()


def test_pages_are_newest_first_and_walk_a_session_without_gaps_or_repeats(
        queries: HistoryQueries) -> None:
    first = queries.page(HistoryFilter())
    assert [row.request_id for row in first[:2]] == [f"req-{COUNT - 1}", f"req-{COUNT - 2}"]
    flt = HistoryFilter(session_id=session_id(3))
    seen: list[int] = []
    page = queries.page(flt)
    while page:
        seen.extend(row.seq for row in page)
        page = queries.page(flt, before_seq=page[-1].seq)
    assert len(seen) == COUNT // 8 == len(set(seen))
    assert seen == sorted(seen, reverse=True)


def test_totals_count_every_outcome_and_decider_in_the_export_s_words(
        queries: HistoryQueries, big: Path) -> None:
    truth = _all_outcomes(big)
    totals = queries.totals(HistoryFilter())
    assert totals.total == COUNT
    assert totals.by_outcome["allow_once"] == sum(
        n for (outcome, _by), n in truth.items() if outcome == "allow_once")
    assert totals.by_outcome[PENDING] == truth[(None, None)]
    assert totals.by_decider["you"] == sum(n for (_o, by), n in truth.items() if by == "user")
    # "what ran without me": the agent's CLI under its own grant
    assert totals.by_decider["the agent's CLI, under its session grant"] == truth[
        ("allow_once", "cli")]
    assert totals.approved_by_you == sum(
        n for (outcome, by), n in truth.items()
        if by == "user" and outcome in ("allow_once", "allow_session"))
    assert totals.ran_without_you == truth[("allow_once", "cli")]
    cli = queries.totals(HistoryFilter(decided_by="cli"))
    assert cli.total == truth[("allow_once", "cli")]
    assert set(cli.by_outcome) == {"allow_once"}


def test_text_filter_finds_the_rare_word_in_the_input_and_nothing_else(
        queries: HistoryQueries) -> None:
    rows = queries.page(HistoryFilter(text=MARKER.upper()), limit=1000)
    assert len(rows) == len(range(0, COUNT, MARKER_EVERY))
    assert all(MARKER in row.asked for row in rows)
    assert queries.totals(HistoryFilter(text=MARKER)).total == len(rows)
    # LIKE's wildcards are matched as themselves
    assert queries.page(HistoryFilter(text="%_%")) == []


def test_filters_combine_and_pending_means_never_decided(queries: HistoryQueries) -> None:
    pending = queries.page(HistoryFilter(outcome=PENDING), limit=50)
    assert pending and all(row.outcome is None and row.who == "" for row in pending)
    denied = queries.page(HistoryFilter(outcome="deny", decided_by="session_rule"))
    assert denied and all(row.who == f"denied by the session rule {GRANT}" for row in denied)
    assert queries.page(HistoryFilter(session_id="nobody")) == []
    assert queries.totals(HistoryFilter(since=since_for("today"))).total == 0
    last_hour = HistoryFilter(since="2026-11-02T10:46:40+00:00", outcome="deny")
    rows = queries.page(last_hour, limit=1000)
    assert rows and all(row.received_at >= "2026-11-02T10:46:40" for row in rows)
    assert len(rows) == queries.totals(last_hour).total


def test_a_row_shows_whether_its_input_was_edited_before_it_ran(
        queries: HistoryQueries) -> None:
    rows = queries.page(HistoryFilter(), before_seq=101, limit=100)
    edited = [row for row in rows if row.edited]
    assert edited and all(row.ran and "--dry-run" in row.ran for row in edited)
    assert all(not row.edited for row in rows if row.ran == row.asked)


def test_the_rules_of_a_row_are_the_grant_it_ran_under_or_the_grant_it_made(
        queries: HistoryQueries) -> None:
    cli_row = queries.page(HistoryFilter(decided_by="cli"), limit=1)[0]
    rules, _reach = queries.granting_rules(cli_row.request_id)
    assert [str(r.rule) for r in rules] == [GRANT]
    assert rules[0].session_id == cli_row.session_id
    granted = queries.page(HistoryFilter(outcome="allow_session"), limit=1)[0]
    assert [str(r.rule) for r in queries.granting_rules(granted.request_id)[0]] == [GRANT]
    plain = queries.page(HistoryFilter(outcome="allow_once", decided_by="user"), limit=1)[0]
    assert queries.granting_rules(plain.request_id)[0] == []


def test_export_of_a_filter_is_the_ledger_export_of_those_rows(
        big: Path, tmp_path: Path) -> None:
    flt = HistoryFilter(text=MARKER)
    progress: list[tuple[int, int]] = []
    out = tmp_path / "view.csv"
    count = export_history(big, flt, out, "csv", lambda d, t: progress.append((d, t)))
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == list(EXPORT_COLUMNS)
    assert count == len(rows) - 1 == progress[-1][0] == progress[-1][1]
    assert out.stat().st_mode & 0o777 == 0o600
    # the same writer: each line equals `ledger export`'s line for the same request
    with Database.open(big) as db:
        whole = io.StringIO()
        export_ledger(db, whole, "jsonl", session_id=session_id(0))
    by_id = {json.loads(line)["entry_id"]: line for line in whole.getvalue().splitlines()
             if json.loads(line)["entry_type"] == "approval"}
    lines = tmp_path / "view.jsonl"
    export_history(big, HistoryFilter(session_id=session_id(0), text=MARKER), lines, "jsonl")
    exported = lines.read_text(encoding="utf-8").splitlines()
    assert exported and all(line == by_id[json.loads(line)["entry_id"]] for line in exported)


def test_the_reader_answers_on_its_own_thread(big: Path) -> None:
    reader = HistoryReader(big)
    try:
        page = reader.page(HistoryFilter(outcome="deny")).result(timeout=30)
        assert page and {row.outcome for row in page} == {"deny"}
        entry = reader.entry(page[0].request_id).result(timeout=30)
        assert entry is not None and entry.original_input is not None
    finally:
        reader.close()


def test_schema_step_3_indexes_an_older_ledger_and_filtered_pages_use_them(
        tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    for number, step in enumerate(MIGRATIONS[:2], start=1):
        for statement in step:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.commit()
    conn.close()
    with Database.open(path) as db:
        assert db.schema_version == len(MIGRATIONS) >= 3
        names = {row[0] for row in db.fetchall("SELECT name FROM sqlite_master")}
        plan = " ".join(str(row[3]) for row in db.fetchall(
            "EXPLAIN QUERY PLAN SELECT seq FROM approvals WHERE session_id = ? "
            "ORDER BY seq DESC LIMIT 200", ("s",)))
    assert {"approvals_by_session_seq", "approvals_by_outcome"} <= names
    assert "approvals_by_session_seq" in plan and "TEMP B-TREE" not in plan


def test_the_host_filter_narrows_to_one_host_on_its_index(tmp_path: Path) -> None:
    """Rows carry their host (None: this computer); a host filter lists, counts and
    exports that host's rows only, newest first, off the host index; the hosts list
    names each once."""
    path = fill_ledger(tmp_path / "hosts.sqlite3", 2000)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE approvals SET host = 'box' WHERE seq % 10 = 0")
    conn.execute("UPDATE approvals SET host = '<b>x</b>' WHERE seq % 100 = 1")
    conn.commit()
    conn.close()
    queries = HistoryQueries(connect_read_only(path))
    assert queries.hosts() == [THIS_COMPUTER, "<b>x</b>", "box"]
    box = queries.page(HistoryFilter(host="box"), limit=1000)
    assert len(box) == 200 == queries.totals(HistoryFilter(host="box")).total
    assert {row.host for row in box} == {"box"}
    assert [row.seq for row in box] == sorted((row.seq for row in box), reverse=True)
    here = queries.page(HistoryFilter(host=THIS_COMPUTER), limit=2000)
    assert len(here) == 2000 - 200 - 20 and {row.host for row in here} == {None}
    outcome = queries.page(HistoryFilter(host="<b>x</b>"), limit=1)[0].status
    marked = queries.page(HistoryFilter(host="<b>x</b>", outcome=outcome), limit=1000)
    assert 0 < len(marked) < 20
    assert {(row.host, row.status) for row in marked} == {("<b>x</b>", outcome)}
    with Database.open(path) as db:
        plan = " ".join(str(row[3]) for row in db.fetchall(
            "EXPLAIN QUERY PLAN SELECT seq FROM approvals WHERE host = ? "
            "ORDER BY seq DESC LIMIT 200", ("box",)))
    assert "approvals_by_host_seq" in plan and "TEMP B-TREE" not in plan
    out = tmp_path / "box.csv"
    assert export_history(path, HistoryFilter(host="box"), out, "csv") == 200
    with out.open(newline="", encoding="utf-8") as handle:
        assert {row["host"] for row in csv.DictReader(handle)} == {"box"}
