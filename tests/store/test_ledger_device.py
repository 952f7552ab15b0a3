"""The ledger names the paired phone a person answered on: rows, history, detail, export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from qoder_desktop.domain.history import HistoryFilter
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision
from qoder_desktop.store.database import Database
from qoder_desktop.store.history import HistoryQueries, connect_read_only
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.store.ledger_export import export_ledger
from qoder_desktop.ui.windows.history_detail import entry_text

PHONE = "=HYPERLINK(1) (3f9a1c)"
"""A device label whose name a spreadsheet would run as a formula."""


def _request(command: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s1", session_name="Demo", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command})


def _answered(path: Path) -> tuple[str, str]:
    """A request allowed on the phone and one denied at the desk; their ids."""
    with Database.open(path) as db:
        ledger = Ledger(db)
        phone, desk = _request("make test"), _request("make clean")
        for request in (phone, desk):
            ledger.record_request(request)
        ledger.record_decision(phone, Decision.allow_once(dict(phone.tool_input))
                               .model_copy(update={"device": PHONE}))
        ledger.record_decision(desk, Decision.deny("not now"))
    return phone.request_id, desk.request_id


def test_the_ledger_and_the_history_name_the_phone(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    phone, desk = _answered(path)
    conn = connect_read_only(path)
    try:
        queries = HistoryQueries(conn)
        rows = {row.request_id: row for row in queries.page(HistoryFilter())}
        assert (rows[phone].device, rows[phone].who) == (PHONE, f"you, on {PHONE}")
        assert (rows[desk].device, rows[desk].who) == (None, "you")
        assert [row.request_id for row in queries.page(HistoryFilter(text="3f9a1c"))] == [phone]
        entry = queries.entry(phone)
    finally:
        conn.close()
    assert entry is not None and entry.device == PHONE
    assert f"Decided by: you, on {PHONE}" in entry_text(entry.model_dump(mode="json"))


def test_the_export_carries_the_device_and_keeps_csv_safe(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    phone, desk = _answered(path)
    with Database.open(path) as db:
        text, lines = io.StringIO(), io.StringIO()
        export_ledger(db, text, "csv")
        export_ledger(db, lines, "jsonl")
    rows = {row["entry_id"]: row for row in csv.DictReader(io.StringIO(text.getvalue()))}
    assert rows[phone]["device"] == "'" + PHONE and rows[desk]["device"] == ""
    assert rows[phone]["who"] == f"you, on {PHONE}"
    records = {record["entry_id"]: record for record in map(json.loads,
                                                            lines.getvalue().splitlines())}
    assert records[phone]["device"] == PHONE and records[desk]["device"] is None
