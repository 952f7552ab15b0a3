"""Storage faults injected into the app's own SQLite connection.

Both faults make SQLite fail a write the way the real fault does, with the same error
code on the same connection, and both can be lifted while the app runs:

* a full disk: ``PRAGMA max_page_count`` caps the file at the pages it has, then filler
  rows take the room left; the next write that needs a page fails with SQLITE_FULL
  ("database or disk is full"), the code SQLite gives for ENOSPC, and SQLite rolls the
  statement back as it does then. (A tiny tmpfs or a loop device needs privileges the
  test machines lack.)
* a read-only database: ``PRAGMA query_only`` makes every write fail with
  SQLITE_READONLY ("attempt to write a readonly database"), the code a read-only file
  gives. (The tests run as root, for whom chmod changes nothing, and a connection that
  is already open keeps writing through its descriptor anyway.)
"""

from __future__ import annotations

import contextlib

from qoder_desktop.store.database import Database, StorageError

NO_LIMIT = 1073741823
"""SQLite's default `max_page_count`."""


def fill_disk(db: Database) -> None:
    """Cap the database at its size and fill what is left: the disk is full."""
    db.execute("CREATE TABLE IF NOT EXISTS filler (x BLOB)")
    pages = int(db.fetchall("PRAGMA page_count")[0][0])
    db.execute(f"PRAGMA max_page_count = {pages}")
    for size in (4096, 512, 64, 8):
        with contextlib.suppress(StorageError):
            while True:
                db.execute("INSERT INTO filler VALUES (zeroblob(?))", (size,))


def free_disk(db: Database) -> None:
    """The disk has room again."""
    db.execute(f"PRAGMA max_page_count = {NO_LIMIT}")


def make_read_only(db: Database, read_only: bool = True) -> None:
    """Writes to the database fail as on a read-only file (or work again)."""
    db.execute(f"PRAGMA query_only = {'ON' if read_only else 'OFF'}")
