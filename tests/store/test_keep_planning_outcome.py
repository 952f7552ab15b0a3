"""A plan sent back ("Keep planning") is recorded as what it is: its own outcome, named in
the export; older ledgers, which hold such answers as plain denials, stay readable."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, DecisionKind
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.store.ledger_export import export_ledger


def _plan(tool_use_id: str) -> ApprovalRequest:
    return ApprovalRequest(session_id="s1", session_name="Plan", backend=Backend.CLAUDE,
                           tool_name="ExitPlanMode", tool_input={"plan": "# Plan\n1. Do it"},
                           tool_use_id=tool_use_id, cwd="/tmp/work")


def test_keep_planning_is_its_own_outcome_and_old_denials_still_read(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "ledger.sqlite3")
    ledger = Ledger(db)
    old, new = _plan("toolu_old"), _plan("toolu_new")
    for request in (old, new):
        ledger.record_request(request)
    ledger.record_decision(old, Decision.deny("Keep planning."))  # as older versions did
    ledger.record_decision(new, Decision.keep_planning("Add a README step."))
    entries = {e.tool_use_id: e for e in ledger.entries("s1")}
    assert entries["toolu_new"].outcome is DecisionKind.KEEP_PLANNING
    assert entries["toolu_new"].message == "Add a README step."
    assert entries["toolu_old"].outcome is DecisionKind.DENY
    out = io.StringIO()
    export_ledger(db, out, "csv")
    rows = {row["tool_use_id"]: row for row in csv.DictReader(io.StringIO(out.getvalue()))}
    assert (rows["toolu_new"]["outcome"], rows["toolu_new"]["status"],
            rows["toolu_new"]["who"]) == ("keep_planning", "keep_planning", "you")
    assert rows["toolu_old"]["status"] == "deny"
    db.close()


def test_keep_planning_never_allows_and_needs_a_message() -> None:
    decision = Decision.keep_planning("  ")
    assert not decision.kind.allows and decision.message == "Keep planning."
