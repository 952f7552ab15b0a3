"""The decision history's query side: pages, totals, one entry, its rules, the export.

`HistoryQueries` runs the queries on one read-only SQLite connection of its own (WAL:
reading never waits on the app's writes). Pages are keyset pages, newest first (``seq <
last seen``), so page 500 costs what page 1 does; totals are one ``GROUP BY`` over the
indexes of schema steps 3 and 5.
`HistoryReader` runs them on a thread of its own and hands back
futures, so a window asking never blocks; `export_history` writes the rows of a filter
with `ledger_export.write_entries`, the writer of ``qoder-desktop ledger export``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from qoder_desktop.domain.history import (
    PENDING,
    THIS_COMPUTER,
    HistoryFilter,
    HistoryRow,
    HistoryTotals,
)
from qoder_desktop.domain.kinds import Backend, DecidedBy, DecisionKind, SessionState
from qoder_desktop.domain.models import RuleValue, SessionRule
from qoder_desktop.domain.revocation import RevokeReach, revoke_reach
from qoder_desktop.store.database import StorageError, _rule
from qoder_desktop.store.ledger import DECIDER_WORDS, LedgerEntry, approval_entry, who_decided
from qoder_desktop.store.ledger_export import ExportFormat, open_private, write_entries

PAGE_SIZE = 200
"""Rows per page the history list fetches."""
PREVIEW_CHARS = 300
"""How much of an input a listed row carries (the detail reads the whole)."""
EXPORT_BATCH = 500

_T = TypeVar("_T")

_TEXT_COLUMNS = ("tool_name", "session_name", "title", "matched_rule", "message",
                 "original_input_json", "final_input_json", "device")

_ROW_COLUMNS = (
    "seq, request_id, session_id, session_name, host, tool_name, title, outcome, "
    "decided_by, device, received_at, decided_at, latency_ms, matched_rule, "
    f"substr(original_input_json, 1, {PREVIEW_CHARS}) AS asked, "
    f"substr(final_input_json, 1, {PREVIEW_CHARS}) AS ran, "
    "(final_input_json IS NOT NULL AND final_input_json != original_input_json) AS edited")


def _where(flt: HistoryFilter) -> tuple[str, list[Any]]:
    """The WHERE clause (without the keyword; "1" for none) and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.host == THIS_COMPUTER:
        clauses.append("host IS NULL")
    elif flt.host is not None:
        clauses.append("host = ?")
        params.append(flt.host)
    if flt.session_id:
        clauses.append("session_id = ?")
        params.append(flt.session_id)
    if flt.outcome == PENDING:
        clauses.append("outcome IS NULL")
    elif flt.outcome:
        clauses.append("outcome = ?")
        params.append(flt.outcome)
    if flt.decided_by:
        clauses.append("decided_by = ?")
        params.append(flt.decided_by)
    if flt.since:
        # The seq bound is implied (the least seq of those rows) but lets a page read
        # the newest rows only, not scan back to the oldest when few or none match.
        # (INDEXED BY: else SQLite walks the rowids from the oldest for the min.)
        clauses.append("received_at >= ? AND seq >= (SELECT ifnull(min(seq), 1 << 62) "
                       "FROM approvals INDEXED BY approvals_by_received "
                       "WHERE received_at >= ?)")
        params.extend([flt.since, flt.since])
    text = flt.text.strip()
    if text:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in _TEXT_COLUMNS)
                       + ")")
        params.extend([pattern] * len(_TEXT_COLUMNS))
    return (" AND ".join(clauses) or "1"), params


def _who(outcome: str | None, decided_by: str | None, rule: str | None,
         device: str | None = None) -> str:
    try:
        return who_decided(DecidedBy(decided_by) if decided_by else None,
                           DecisionKind(outcome) if outcome else None, rule, device)
    except ValueError:  # a code this version does not know: show it as it is
        return decided_by or ""


def _history_row(row: sqlite3.Row) -> HistoryRow:
    return HistoryRow(
        seq=row["seq"], request_id=row["request_id"], session_id=row["session_id"],
        session_name=row["session_name"], tool_name=row["tool_name"], title=row["title"],
        outcome=row["outcome"], decided_by=row["decided_by"],
        who=_who(row["outcome"], row["decided_by"], row["matched_rule"], row["device"]),
        received_at=row["received_at"], decided_at=row["decided_at"],
        latency_ms=row["latency_ms"], matched_rule=row["matched_rule"], asked=row["asked"],
        ran=row["ran"], edited=bool(row["edited"]), host=row["host"], device=row["device"])


def decider_words(decided_by: str | None) -> str:
    """Who decided, in the ledger export's words, for a `DecidedBy` value ("" for none)."""
    if decided_by is None:
        return "nobody yet (pending)"
    try:
        return DECIDER_WORDS[DecidedBy(decided_by)]
    except ValueError:
        return decided_by


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to the database file at `path` (usable from any thread).

    Raises:
        StorageError: the file cannot be opened.
    """
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
                               check_same_thread=False, timeout=10.0)
    except sqlite3.Error as exc:
        raise StorageError(f"Cannot read the ledger at {path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    return conn


class HistoryQueries:
    """The history's queries on one connection (use it from one thread at a time)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _all(self, sql: str, params: list[Any] | tuple[Any, ...]) -> list[sqlite3.Row]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StorageError(f"Reading the ledger failed: {exc}") from exc

    def page(self, flt: HistoryFilter, before_seq: int | None = None,
             limit: int = PAGE_SIZE) -> list[HistoryRow]:
        """Up to `limit` requests matching `flt`, newest first, older than `before_seq`."""
        where, params = _where(flt)
        if before_seq is not None:
            where += " AND seq < ?"
            params.append(before_seq)
        rows = self._all(f"SELECT {_ROW_COLUMNS} FROM approvals WHERE {where} "
                         "ORDER BY seq DESC LIMIT ?", [*params, limit])
        return [_history_row(row) for row in rows]

    def totals(self, flt: HistoryFilter) -> HistoryTotals:
        """How many requests match `flt`, per outcome and per decider (in words)."""
        where, params = _where(flt)
        rows = self._all(f"SELECT outcome, decided_by, count(*) AS n FROM approvals "
                         f"WHERE {where} GROUP BY outcome, decided_by", params)
        by_outcome: dict[str, int] = {}
        by_decider: dict[str, int] = {}
        total = approved = without = 0
        for row in rows:
            count = int(row["n"])
            total += count
            if row["outcome"] in (DecisionKind.ALLOW_ONCE, DecisionKind.ALLOW_SESSION):
                if row["decided_by"] == DecidedBy.USER:
                    approved += count
                else:
                    without += count
            outcome = row["outcome"] or PENDING
            by_outcome[outcome] = by_outcome.get(outcome, 0) + count
            who = decider_words(row["decided_by"])
            by_decider[who] = by_decider.get(who, 0) + count
        return HistoryTotals(total, by_outcome, by_decider, approved, without)

    def sessions(self) -> list[tuple[str, str]]:
        """(session id, name) of every session with a request in the ledger, newest first."""
        rows = self._all(
            "SELECT session_id, name FROM sessions WHERE EXISTS (SELECT 1 FROM approvals "
            "WHERE approvals.session_id = sessions.session_id) ORDER BY updated_at DESC", ())
        return [(row["session_id"], row["name"]) for row in rows]

    def hosts(self) -> list[str]:
        """The hosts with a request in the ledger, by name; `THIS_COMPUTER` first when a
        request was made on this machine.

        Skips from one host to the next along the host index (a few lookups however many
        requests there are), instead of reading every request for its host.
        """
        rows = self._all(
            "WITH RECURSIVE named(host) AS ("
            " SELECT min(host) FROM approvals WHERE host IS NOT NULL"
            " UNION ALL SELECT (SELECT min(host) FROM approvals WHERE host > named.host)"
            " FROM named WHERE named.host IS NOT NULL) "
            "SELECT host FROM named WHERE host IS NOT NULL", ())
        local = self._all("SELECT 1 FROM approvals WHERE host IS NULL LIMIT 1", ())
        return [THIS_COMPUTER] * bool(local) + [row["host"] for row in rows]

    def entry(self, request_id: str) -> LedgerEntry | None:
        """The whole ledger entry of one request (inputs in full), or None."""
        rows = self._all("SELECT * FROM approvals WHERE request_id = ?", (request_id,))
        return approval_entry(rows[0]) if rows else None

    def granting_rules(self, request_id: str) -> tuple[list[SessionRule], RevokeReach]:
        """The session rules a request ran under or granted, and what revoking reaches.

        A call the agent's CLI ran under its grant names the rule we read it as; a
        request the person allowed for the session carries the rules granted with it; a
        deny by a session rule names that rule. Each is looked up among its session's
        rules by its text (active and revoked ones, so the row shows what happened).
        """
        entry = self.entry(request_id)
        if entry is None:
            return [], RevokeReach.NONE
        wanted: set[str] = set()
        if entry.matched_rule:
            wanted.add(entry.matched_rule)
        for update in entry.granted_updates or ():
            if update.get("type") != "addRules":
                continue
            for rule in update.get("rules") or ():
                try:
                    wanted.add(str(RuleValue(tool_name=rule.get("toolName", ""),
                                             rule_content=rule.get("ruleContent"))))
                except (ValueError, AttributeError):
                    continue
        if not wanted:
            return [], RevokeReach.NONE
        rows = self._all("SELECT * FROM session_rules WHERE session_id = ? "
                         "ORDER BY granted_at DESC", (entry.session_id,))
        rules = [rule for rule in map(_rule, rows) if str(rule.rule) in wanted]
        session = self._all("SELECT backend, state FROM sessions WHERE session_id = ?",
                            (entry.session_id,))
        reach = RevokeReach.NONE
        if session:
            try:
                reach = revoke_reach(Backend(session[0]["backend"]),
                                     SessionState(session[0]["state"]))
            except ValueError:
                reach = RevokeReach.NONE
        return rules, reach

    def entries(self, flt: HistoryFilter, batch: int = EXPORT_BATCH) -> Iterator[LedgerEntry]:
        """Every request matching `flt` as a whole `LedgerEntry`, newest first (read in
        batches, so memory stays flat on any ledger)."""
        where, params = _where(flt)
        before: int | None = None
        while True:
            extra = [] if before is None else [before]
            clause = where if before is None else f"{where} AND seq < ?"
            rows = self._all(f"SELECT * FROM approvals WHERE {clause} ORDER BY seq DESC "
                             "LIMIT ?", [*params, *extra, batch])
            if not rows:
                return
            for row in rows:
                yield approval_entry(row)
            before = rows[-1]["seq"]


def export_history(path: str | Path, flt: HistoryFilter, out_path: str | Path,
                   fmt: ExportFormat,
                   progress: Callable[[int, int], None] | None = None) -> int:
    """Write the requests matching `flt` (newest first, as listed) to `out_path` as CSV or
    JSON Lines with the ledger export's writer; the file is created 0600.

    Args:
        path: the database file.
        progress: called now and then with (written, total).

    Returns:
        The number of entries written.

    Raises:
        StorageError: the ledger could not be read.
        OSError: the file could not be written.
    """
    conn = connect_read_only(path)
    try:
        queries = HistoryQueries(conn)
        total = queries.totals(flt).total
        if progress is not None:
            progress(0, total)

        def counted() -> Iterator[LedgerEntry]:
            for done, entry in enumerate(queries.entries(flt), start=1):
                yield entry
                if progress is not None and (done % EXPORT_BATCH == 0 or done == total):
                    progress(done, total)

        with open_private(out_path) as out:
            return write_entries(counted(), out, fmt)
    finally:
        conn.close()


class HistoryReader:
    """Runs `HistoryQueries` off the caller's thread; every call returns a future at once.

    Pages and single entries run on one thread, totals on another (a count over a full
    scan never delays the next page), each with its own read-only connection; exports
    run on threads of their own, so browsing stays live during a long one.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._rows = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history-rows")
        self._counts = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history-counts")
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._closed = False

    def _queries(self) -> HistoryQueries:
        queries: HistoryQueries | None = getattr(self._local, "queries", None)
        if queries is None:
            conn = connect_read_only(self.path)
            self._conns.append(conn)
            queries = self._local.queries = HistoryQueries(conn)
        return queries

    def _run(self, work: Callable[[HistoryQueries], _T], *, count: bool = False) -> Future[_T]:
        pool = self._counts if count else self._rows
        return pool.submit(lambda: work(self._queries()))

    def page(self, flt: HistoryFilter, before_seq: int | None = None,
             limit: int = PAGE_SIZE) -> Future[list[HistoryRow]]:
        """`HistoryQueries.page` on the rows' thread."""
        return self._run(lambda q: q.page(flt, before_seq, limit))

    def totals(self, flt: HistoryFilter) -> Future[HistoryTotals]:
        """`HistoryQueries.totals` on the counts' thread."""
        return self._run(lambda q: q.totals(flt), count=True)

    def sessions(self) -> Future[list[tuple[str, str]]]:
        """`HistoryQueries.sessions` on the counts' thread."""
        return self._run(lambda q: q.sessions(), count=True)

    def hosts(self) -> Future[list[str]]:
        """`HistoryQueries.hosts` on the counts' thread."""
        return self._run(lambda q: q.hosts(), count=True)

    def entry(self, request_id: str) -> Future[LedgerEntry | None]:
        """`HistoryQueries.entry` on the rows' thread."""
        return self._run(lambda q: q.entry(request_id))

    def granting_rules(self, request_id: str) -> Future[tuple[list[SessionRule], RevokeReach]]:
        """`HistoryQueries.granting_rules` on the rows' thread."""
        return self._run(lambda q: q.granting_rules(request_id))

    def export(self, flt: HistoryFilter, out_path: str | Path, fmt: ExportFormat,
               progress: Callable[[int, int], None] | None = None) -> Future[int]:
        """`export_history` on a new thread; the future holds the count written."""
        future: Future[int] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(export_history(self.path, flt, out_path, fmt, progress))
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=run, name="history-export", daemon=True).start()
        return future

    def close(self) -> None:
        """Let the queries asked for finish, then close the connections (twice is harmless).

        Returns at once; the threads close their connections when their work is done.
        """
        if self._closed:
            return
        self._closed = True

        def close_all() -> None:
            self._rows.shutdown(wait=True)
            self._counts.shutdown(wait=True)
            for conn in self._conns:
                conn.close()
            self._conns.clear()

        threading.Thread(target=close_all, name="history-close", daemon=True).start()
