"""Exporting the decision ledger: CSV or JSON Lines, and ``qoder-desktop ledger export``.

`export_ledger` writes the ledger of a `Database`; `ledger_export_main` is the command
line. Before anything was recorded (no database file yet) the export is empty and
succeeds.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.store.database import Database, StorageError, encode_json
from qoder_desktop.store.ledger import LedgerEntry, ledger_entries

ExportFormat = Literal["csv", "jsonl"]

EXPORT_COLUMNS: tuple[str, ...] = (*LedgerEntry.model_fields, "status", "who")
"""CSV header, in order (`who`: who decided, in words, beside the `decided_by` code)."""


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return encode_json(value)
    return str(value)


def write_entries(entries: Iterable[LedgerEntry], out: TextIO, fmt: ExportFormat) -> int:
    """Write `entries` to `out` as CSV (header + one row per entry) or JSON Lines; the
    one writer of ``ledger export`` and the history window's export.

    JSON-valued fields are JSON strings in CSV and nested values in JSONL.

    Returns:
        The number of entries written.

    Raises:
        ValueError: `fmt` is neither "csv" nor "jsonl".
    """
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"unknown export format {fmt!r} (use csv or jsonl)")
    count = 0
    writer = csv.writer(out) if fmt == "csv" else None
    if writer is not None:
        writer.writerow(EXPORT_COLUMNS)
    for entry in entries:
        data = entry.model_dump(mode="json")
        if writer is not None:
            writer.writerow([_csv_cell(data[column]) for column in EXPORT_COLUMNS])
        else:
            out.write(json.dumps(data, ensure_ascii=False) + "\n")
        count += 1
    out.flush()
    return count


def open_private(path: str | os.PathLike[str]) -> TextIO:
    """Open `path` for writing an export (created 0600, truncated), UTF-8 text."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    return open(fd, "w", encoding="utf-8", newline="")


def export_ledger(db: Database, out: TextIO, fmt: ExportFormat,
                  session_id: str | None = None) -> int:
    """Write the ledger to `out` as CSV (header + one row per entry) or JSON Lines.

    JSON-valued fields are JSON strings in CSV and nested values in JSONL.

    Returns:
        The number of entries written.

    Raises:
        ValueError: `fmt` is neither "csv" nor "jsonl".
    """
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"unknown export format {fmt!r} (use csv or jsonl)")
    return write_entries(ledger_entries(db, session_id), out, fmt)


def _export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qoder-desktop ledger export",
        description="Write the decision ledger as CSV or JSON Lines.")
    parser.add_argument("--format", choices=("csv", "jsonl"), default="csv",
                        help="output format (default: csv)")
    parser.add_argument("--session", metavar="ID", help="only this session's entries")
    parser.add_argument("--output", metavar="FILE", help="write here instead of stdout")
    parser.add_argument("--database", metavar="FILE", help=argparse.SUPPRESS)
    return parser


def ledger_export_main(argv: Sequence[str] | None = None) -> int:
    """``qoder-desktop ledger export --format csv|jsonl [--session ID] [--output FILE]``.

    Args:
        argv: the arguments after ``ledger export`` (a leading ``ledger``/``export`` is
            skipped too); ``sys.argv[1:]`` when None.

    Returns:
        The exit status: 0 on success (an empty export when nothing was recorded yet,
        not even a database file), 1 when the database cannot be read or the output
        cannot be written.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    for word in ("ledger", "export"):
        if args_list and args_list[0] == word:
            args_list.pop(0)
    args = _export_parser().parse_args(args_list)
    path = Path(args.database) if args.database else AppPaths.default().database
    if not path.exists():
        # A fresh install: nothing was recorded yet, so the ledger is empty.
        print(f"qoder-desktop: nothing recorded yet (no ledger database at {path}); "
              "the export is empty.", file=sys.stderr)
        return _export_empty(args.format, args.output)
    try:
        with Database.open(path) as db:
            if args.output:
                with open_private(args.output) as out:
                    count = export_ledger(db, out, args.format, args.session)
            else:
                count = export_ledger(db, sys.stdout, args.format, args.session)
    except (StorageError, OSError) as exc:
        print(f"qoder-desktop: ledger export failed: {exc}", file=sys.stderr)
        return 1
    if args.output:
        print(f"Wrote {count} ledger entries to {args.output}.", file=sys.stderr)
    return 0


def _export_empty(fmt: ExportFormat, output: str | None) -> int:
    """Write an empty export (the CSV header only; nothing for JSON Lines)."""
    text = io.StringIO()
    if fmt == "csv":
        csv.writer(text).writerow(EXPORT_COLUMNS)
    try:
        if output:
            fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "w", encoding="utf-8", newline="") as out:
                out.write(text.getvalue())
            print(f"Wrote 0 ledger entries to {output}.", file=sys.stderr)
        else:
            sys.stdout.write(text.getvalue())
            sys.stdout.flush()
    except OSError as exc:
        print(f"qoder-desktop: ledger export failed: {exc}", file=sys.stderr)
        return 1
    return 0


_LEDGER_USAGE = ("usage: qoder-desktop ledger export --format csv|jsonl [--session ID] "
                 "[--output FILE]")


def ledger_main(argv: Sequence[str]) -> int:
    """``qoder-desktop ledger <command> ...``; the one command is ``export``.

    Args:
        argv: the arguments after ``ledger``.

    Returns:
        The exit status (2 for an unknown or missing command).
    """
    args = list(argv)
    if args[:1] == ["export"]:
        return ledger_export_main(args[1:])
    if args[:1] in (["-h"], ["--help"]):
        print(_LEDGER_USAGE)
        return 0
    what = f"unknown ledger command {args[0]!r}" if args else "missing ledger command"
    print(f"qoder-desktop: {what}.\n{_LEDGER_USAGE}", file=sys.stderr)
    return 2
