"""Disk-level SQLite faults are told in words a person can act on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from qoder_desktop.store.database import Database, StorageError
from qoder_desktop.store.faults import plain_fault


def _raised(action) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as caught:
        action()
    return caught.value


def _full_database(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE t (blob BLOB)")
    conn.execute("PRAGMA max_page_count = 3")
    return conn


def test_a_full_disk_is_named(tmp_path: Path) -> None:
    conn = _full_database(tmp_path / "full.sqlite3")
    error = _raised(lambda: conn.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,)))
    assert plain_fault(error) == "the disk is full"


def test_a_read_only_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "ro.sqlite3"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    error = _raised(lambda: conn.execute("INSERT INTO t VALUES (1)"))
    assert plain_fault(error) == "the database file is read-only"


def test_a_file_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    error = _raised(lambda: sqlite3.connect(tmp_path / "no-such-folder" / "x.sqlite3"))
    assert plain_fault(error) == "the database file cannot be opened"


def test_other_errors_carry_no_plain_words(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite3")
    assert plain_fault(_raised(lambda: conn.execute("SELEKT 1"))) is None
    conn.execute("CREATE TABLE t (x UNIQUE)")
    conn.execute("INSERT INTO t VALUES (1)")
    assert plain_fault(_raised(lambda: conn.execute("INSERT INTO t VALUES (1)"))) is None


def test_the_store_tells_a_full_disk_without_advice_to_move_the_file(db: Database) -> None:
    db.execute("CREATE TABLE filler (blob BLOB)")
    pages = db.fetchall("PRAGMA page_count")[0][0]
    db.execute(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(StorageError) as caught:
        db.execute("INSERT INTO filler VALUES (?)", (b"x" * 200_000,), what="Saving the rule")
    message = str(caught.value)
    assert message.startswith("Saving the rule failed: the disk is full")
    assert "move it aside" not in message
