"""The SQLite store: sessions, session rules and (see `ledger`) the decision ledger.

One `Database` owns one connection. The connection may be used from any thread (writes
can come from a worker thread); a lock serialises every use. Every write is committed
before the method returns, with ``synchronous=FULL`` in WAL mode, so a decision that was
recorded survives a crash or a power cut. `Database.writer` is its one writer thread
(`store.writer.StoreWriter`), for writes the event loop should not wait on.

The schema is versioned with ``PRAGMA user_version``; `schema.MIGRATIONS` is the
ordered list of steps, each applied once in its own transaction.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from qoder_desktop.domain.kinds import RuleBehavior
from qoder_desktop.store.faults import plain_fault
from qoder_desktop.store.schema import MIGRATIONS
from qoder_desktop.store.writer import StoreWriter

if TYPE_CHECKING:  # the app opens the store before its first paint, pydantic loads after
    from qoder_desktop.domain.models import SessionInfo, SessionRule


PAGE_CACHE_KIB = 512
"""SQLite's page cache of the store's connection (its default is 2,000 KiB). The
connection mostly writes (ledger rows, each touching a leaf page of the approvals table
and of each of its indexes) and reads a few rows by index; the history reads on
connections of its own. Pages a write touched once stay cached until the cache is full,
so the default filled to 2 MB within ~2,000 requests for nothing: 60,000 ledger writes
took the same time with 512 KiB (median 0.13 against 0.16 ms without the disk's sync;
`benchmarks/README.md`, the soak section)."""


class StorageError(Exception):
    """The database could not be opened, read or written."""


class NotFoundError(StorageError, LookupError):
    """A session or rule that the caller named is not in the database."""


def encode_time(value: datetime) -> str:
    """A datetime as fixed-width ISO 8601 in UTC (naive values are taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def decode_time(text: str) -> datetime:
    """The inverse of `encode_time`."""
    return datetime.fromisoformat(text)


def decode_optional_time(text: str | None) -> datetime | None:
    """`decode_time`, but None stays None."""
    return None if text is None else datetime.fromisoformat(text)


def encode_json(value: Any) -> str:
    """JSON the way every JSON column stores it (UTF-8 text, sorted keys)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def decode_json(text: str | None) -> Any:
    """The inverse of `encode_json`; None stays None."""
    return None if text is None else json.loads(text)


class Database:
    """One SQLite file holding sessions, session rules and the ledger.

    Use `Database.open(path)`; close with `close()` or a ``with`` block. Safe to share
    between threads.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._conn: sqlite3.Connection | None = connection
        self._lock = threading.RLock()
        self.path = path
        self._active_rules: dict[str, tuple[SessionRule, ...]] = {}
        """Active rules per session, read on every tool call; dropped on any rule change."""
        self._writer: StoreWriter | None = None

    # -- life cycle --------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Database:
        """Open (creating if needed) and migrate the database at `path`.

        Raises:
            StorageError: the file is not a readable SQLite database of a known version.
        """
        file = Path(path)
        try:
            file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not file.exists():
                os.close(os.open(file, os.O_CREAT | os.O_WRONLY, 0o600))
            conn = sqlite3.connect(file, check_same_thread=False, isolation_level=None,
                                   timeout=10.0)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"Cannot open the database file {file}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        db = cls(conn, file)
        try:
            with db._guard("open"):
                conn.execute("PRAGMA foreign_keys = ON")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = FULL")
                conn.execute("PRAGMA busy_timeout = 10000")
                conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
                db._migrate()
        except BaseException:
            conn.close()
            raise
        return db

    @property
    def writer(self) -> StoreWriter:
        """The one thread that writes off the event loop (started on first use)."""
        writer = self._writer  # once made it stays: no waiting on the lock a write holds
        if writer is not None:
            return writer
        with self._lock:
            if self._writer is None:
                self._writer = StoreWriter(self)
            return self._writer

    def flush(self) -> None:
        """Wait until the writer thread has written everything handed to it so far."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Write what the writer thread holds, then close the connection; twice is harmless."""
        writer = self._writer
        if writer is not None:
            writer.close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Database:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The ``user_version`` the file is at."""
        return int(self.fetchall("PRAGMA user_version")[0][0])

    def _migrate(self) -> None:
        conn = self._connection()
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > len(MIGRATIONS):
            raise StorageError(
                f"The database file {self.path} has schema version {version}, newer than "
                f"this Qoder Desktop understands ({len(MIGRATIONS)}). Update the app.")
        for number in range(version + 1, len(MIGRATIONS) + 1):
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[number - 1]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    # -- low-level access (also used by `ledger`) -------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StorageError(f"The database {self.path} is closed.")
        return self._conn

    @contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"{what} refused by the database {self.path}: {exc}") from exc
        except sqlite3.Error as exc:
            if (plain := plain_fault(exc)) is not None:
                raise StorageError(f"{what} failed: {plain} ({self.path}: {exc})") from exc
            raise StorageError(
                f"{what} failed on the database file {self.path}: {exc}. If the file is "
                "damaged, quit Qoder Desktop and move it aside to start afresh.") from exc

    def execute(self, sql: str, params: Sequence[Any] = (), *,
                what: str = "write") -> sqlite3.Cursor:
        """Run one statement; it is committed (and synced) before this returns."""
        with self._lock, self._guard(what):
            return self._connection().execute(sql, params)

    def fetchall(self, sql: str, params: Sequence[Any] = (), *,
                 what: str = "read") -> list[sqlite3.Row]:
        """Run one query and return all rows."""
        with self._lock, self._guard(what):
            return self._connection().execute(sql, params).fetchall()

    @contextmanager
    def transaction(self, what: str = "write") -> Iterator[sqlite3.Connection]:
        """Hold the lock and an IMMEDIATE transaction; commit on success."""
        with self._lock, self._guard(what):
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # (SQLite rolls back itself on a full disk)
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- sessions ----------------------------------------------------------------------

    def upsert_session(self, info: SessionInfo) -> None:
        """Insert a session, or update everything but its creation time.

        The row is the durable record the rules and the ledger refer to; the app reads
        sessions from the hub (`SessionHub.sessions`), which writes here on each change.
        """
        from qoder_desktop.domain.models import utc_now

        now = encode_time(utc_now())
        self.execute(
            """INSERT INTO sessions (session_id, name, backend, cwd, permission_mode, state,
                   error, created_at, updated_at, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(session_id) DO UPDATE SET name = excluded.name,
                   backend = excluded.backend, cwd = excluded.cwd,
                   permission_mode = excluded.permission_mode, state = excluded.state,
                   error = excluded.error, updated_at = excluded.updated_at,
                   host = excluded.host""",
            (info.session_id, info.name, info.backend.value, info.cwd,
             info.permission_mode.value, info.state.value, info.error,
             encode_time(info.created_at), now, info.host),
            what="saving a session")

    # -- session rules -----------------------------------------------------------------

    def add_rules(self, new_rules: Iterable[SessionRule]) -> None:
        """Persist several granted rules in one transaction (all or none)."""
        try:
            self._insert_rules(new_rules)
        finally:
            self._active_rules.clear()

    def _insert_rules(self, new_rules: Iterable[SessionRule]) -> None:
        with self.transaction("saving session rules") as conn:
            for rule in new_rules:
                known = conn.execute("SELECT 1 FROM sessions WHERE session_id = ?",
                                     (rule.session_id,)).fetchone()
                if known is None:
                    raise NotFoundError(
                        f"Cannot save rule {rule.rule}: session {rule.session_id!r} is not "
                        f"in {self.path} (save it with upsert_session first).")
                conn.execute(
                    """INSERT INTO session_rules (rule_id, session_id, behavior, tool_name,
                           rule_content, granted_by, granted_at, revoked_at)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                    (rule.rule_id, rule.session_id, rule.behavior.value,
                     rule.rule.tool_name, rule.rule.rule_content, rule.granted_by,
                     encode_time(rule.granted_at),
                     encode_time(rule.revoked_at) if rule.revoked_at else None))

    def get_rule(self, rule_id: str) -> SessionRule | None:
        """The rule with this id (revoked or not), or None."""
        rows = self.fetchall("SELECT * FROM session_rules WHERE rule_id = ?", (rule_id,))
        return _rule(rows[0]) if rows else None

    def all_rules(self, session_id: str) -> list[SessionRule]:
        """Every rule of a session, revoked ones included, in the order granted."""
        rows = self.fetchall(
            "SELECT * FROM session_rules WHERE session_id = ? ORDER BY granted_at, rowid",
            (session_id,))
        return [_rule(row) for row in rows]

    def active_rules(self, session_id: str) -> list[SessionRule]:
        """The session's rules that are not revoked, in the order granted (cached).

        A cached answer is read without the lock, which the writer thread holds for the
        length of each write: the cache is only filled under the lock and dropped after
        every grant or revoke, so what a reader finds is what it would find holding it.
        """
        cached = self._active_rules.get(session_id)
        if cached is None:
            with self._lock:
                cached = self._active_rules.get(session_id)
                if cached is None:
                    cached = tuple(rule for rule in self.all_rules(session_id) if rule.active)
                    self._active_rules[session_id] = cached
        return list(cached)

    def revoke_rule(self, rule_id: str, *, revoked_by: str = "user",
                    at: datetime | None = None) -> bool:
        """Revoke a rule; True if it was active, False if it was already revoked.

        Raises:
            NotFoundError: no rule has this id.
        """
        try:
            return self._mark_revoked(rule_id, revoked_by, at)
        finally:
            self._active_rules.clear()

    def _mark_revoked(self, rule_id: str, revoked_by: str, at: datetime | None) -> bool:
        from qoder_desktop.domain.models import utc_now

        with self.transaction("revoking a rule") as conn:
            cursor = conn.execute(
                """UPDATE session_rules SET revoked_at = ?, revoked_by = ?
                   WHERE rule_id = ? AND revoked_at IS NULL""",
                (encode_time(at or utc_now()), revoked_by, rule_id))
            if cursor.rowcount:
                return True
            if conn.execute("SELECT 1 FROM session_rules WHERE rule_id = ?",
                            (rule_id,)).fetchone() is None:
                raise NotFoundError(f"No session rule {rule_id!r} in {self.path}.")
            return False

def _rule(row: sqlite3.Row) -> SessionRule:
    from qoder_desktop.domain.models import RuleValue, SessionRule

    return SessionRule(
        rule_id=row["rule_id"], session_id=row["session_id"],
        behavior=RuleBehavior(row["behavior"]),
        rule=RuleValue(tool_name=row["tool_name"], rule_content=row["rule_content"]),
        granted_by=row["granted_by"], granted_at=decode_time(row["granted_at"]),
        revoked_at=decode_optional_time(row["revoked_at"]),
        removal_delivered_at=decode_optional_time(row["removal_delivered_at"]))
