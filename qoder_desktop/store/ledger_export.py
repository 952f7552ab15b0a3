"""Exporting the decision ledger: CSV or JSON Lines, and ``qoder-desktop ledger export``.

`export_ledger` writes the ledger of a `Database`; `ledger_export_main` is the command
line. Before anything was recorded (no database file yet) the export is empty and
succeeds.

Tool names, session ids, paths and inputs come from the agent, and a spreadsheet
runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula. In CSV a text
cell that starts with one of `FORMULA_STARTS` gets an apostrophe in front (the usual
defence: spreadsheets show it as text), and hidden characters are made visible with
the one policy of `text.visible` (``⟨ESC⟩``; inside JSON cells as ``\\uXXXX`` escapes,
so the JSON still parses to the same value). JSON Lines stay byte-exact.
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
from qoder_desktop.text.visible import json_escape_hidden, make_visible

ExportFormat = Literal["csv", "jsonl"]

EXPORT_COLUMNS: tuple[str, ...] = (*LedgerEntry.model_fields, "status", "who")
"""CSV header, in order (`who`: who decided, in words, beside the `decided_by` code)."""


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""A CSV text cell starting with one of these is read as a formula by some spreadsheet
(the full-width forms by East Asian locales of Excel); the export puts ``'`` in front."""

FORMULA_GUARD = "'"
"""What goes in front of a cell that would start a formula."""


def csv_safe(text: str) -> str:
    """`text` as a CSV cell a spreadsheet shows as text: hidden characters made
    visible, and a formula start neutralised with a leading apostrophe."""
    shown = make_visible(text)
    return FORMULA_GUARD + shown if shown.startswith(FORMULA_STARTS) else shown


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)  # a number of ours, never the agent's text
    if isinstance(value, dict | list):
        return csv_safe(json_escape_hidden(encode_json(value)))
    return csv_safe(str(value))


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

    JSON-valued fields are JSON strings in CSV and nested values in JSONL. CSV text
    cells are made safe for spreadsheets (`csv_safe`); JSON Lines keep every value as
    recorded.

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
        not even a database file; also when the reader closed the pipe early, as in
        ``| head``), 1 when the database cannot be read or the output cannot be
        written, 2 when `--session` names a session the ledger does not know.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    for word in ("ledger", "export"):
        if args_list and args_list[0] == word:
            args_list.pop(0)
    args = _export_parser().parse_args(args_list)
    path = Path(args.database) if args.database else AppPaths.default().database
    if not path.exists():
        if args.session:
            return _no_such_session(args.session)
        # A fresh install: nothing was recorded yet, so the ledger is empty.
        print(f"qoder-desktop: nothing recorded yet (no ledger database at {path}); "
              "the export is empty.", file=sys.stderr)
        return _export_empty(args.format, args.output)
    try:
        with Database.open(path) as db:
            if args.session and not session_known(db, args.session):
                return _no_such_session(args.session)
            if args.output:
                with open_private(args.output) as out:
                    count = export_ledger(db, out, args.format, args.session)
            else:
                count = export_ledger(db, sys.stdout, args.format, args.session)
    except BrokenPipeError:
        return _reader_gone()
    except (StorageError, OSError) as exc:
        print(f"qoder-desktop: ledger export failed: {exc}", file=sys.stderr)
        return 1
    if args.output:
        print(f"Wrote {count} ledger entries to {args.output}.", file=sys.stderr)
    return 0


def session_known(db: Database, session_id: str) -> bool:
    """True when the ledger knows `session_id` (a session row, a request or a tool event)."""
    return bool(db.fetchall(
        "SELECT 1 FROM sessions WHERE session_id = ?1 UNION ALL "
        "SELECT 1 FROM approvals WHERE session_id = ?1 UNION ALL "
        "SELECT 1 FROM tool_events WHERE session_id = ?1 LIMIT 1", (session_id,)))


def _no_such_session(session_id: str) -> int:
    print(f"qoder-desktop: no session {session_id!r} in the ledger; nothing exported.",
          file=sys.stderr)
    return 2


def _reader_gone() -> int:
    """The reader closed the pipe (``| head``): stop quietly and succeed, as Unix tools
    do. Standard output points at /dev/null from here on, so Python's own flush at exit
    does not fail on the closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
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
    except BrokenPipeError:
        return _reader_gone()
    except OSError as exc:
        print(f"qoder-desktop: ledger export failed: {exc}", file=sys.stderr)
        return 1
    return 0


_LEDGER_USAGE = ("usage: qoder-desktop ledger export [--format csv|jsonl] [--session ID] "
                 "[--output FILE]")
_LEDGER_HELP = f"""{_LEDGER_USAGE}

The decision ledger: every permission request and who answered it how (you, a rule of
yours, the agent's CLI, a timeout), kept in Qoder Desktop's data folder.

commands:
  export    write the ledger as CSV (the default) or JSON Lines, to stdout or --output
            (`qoder-desktop ledger export --help` for its options)
"""


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
        sys.stdout.write(_LEDGER_HELP)
        return 0
    what = f"unknown ledger command {args[0]!r}" if args else "missing ledger command"
    print(f"qoder-desktop: {what}.\n\n{_LEDGER_HELP}", file=sys.stderr, end="")
    return 2
