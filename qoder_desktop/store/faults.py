"""Storage faults in words a person can act on (a full disk, a read-only file)."""

from __future__ import annotations

import sqlite3

_PLAIN = (
    ("SQLITE_FULL", "the disk is full"),
    ("SQLITE_READONLY", "the database file is read-only"),
    ("SQLITE_IOERR", "the disk reported an input/output error"),
    ("SQLITE_CANTOPEN", "the database file cannot be opened"),
)


def plain_fault(exc: sqlite3.Error) -> str | None:
    """What a disk-level SQLite error means for the person (None for other errors).

    These faults pass: the next write succeeds once the disk has room or the file is
    writable again, so they carry no advice to move the file aside.
    """
    name = getattr(exc, "sqlite_errorname", "") or ""
    return next((text for prefix, text in _PLAIN if name.startswith(prefix)), None)
