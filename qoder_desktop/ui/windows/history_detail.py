"""One history row shown whole: the request as asked and as run, who decided and why, and
the session rules it ran under or granted, each with the rules pane's Revoke."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from qoder_desktop.domain.history import PENDING
from qoder_desktop.domain.revocation import RevokeReach
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.widgets.rules_view import RulesView

if TYPE_CHECKING:
    from qoder_desktop.domain.models import SessionRule

OUTCOME_WORDS: dict[str, str] = {
    "allow_once": "allowed once",
    "allow_session": "allowed for the session",
    "deny": "denied",
    "deny_interrupt": "denied and stopped",
    "withdrawn": "withdrawn",
    "error": "an error (denied)",
    PENDING: "pending",
}
"""How the history names each outcome."""


def local_time(text: str | None) -> str:
    """A stored ISO time as local ``YYYY-MM-DD HH:MM:SS`` ('' for None)."""
    if not text:
        return ""
    try:
        return datetime.fromisoformat(text).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return text


def waited(latency_ms: float | None) -> str:
    """How long a request waited, in words short enough for a column."""
    if latency_ms is None:
        return ""
    if latency_ms < 1000:
        return f"{latency_ms:.0f} ms"
    if latency_ms < 120_000:
        return f"{latency_ms / 1000:.1f} s"
    return f"{latency_ms / 60_000:.0f} min"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def entry_text(entry: dict[str, Any]) -> str:
    """The whole of one ledger entry (its export's fields), as text a person reads."""
    status = entry.get("status") or PENDING
    lines = [
        f"{entry.get('tool_name', '')} — {entry.get('title') or ''}".rstrip(" —"),
        f"Session: {entry.get('session_name') or ''} ({entry.get('session_id')})",
        f"Request: {entry.get('entry_id')}",
        f"Outcome: {OUTCOME_WORDS.get(status, status)}",
        f"Decided by: {entry.get('who') or 'nobody yet'}",
        f"Received: {local_time(entry.get('received_at'))}",
        f"Decided: {local_time(entry.get('decided_at')) or '—'}",
        f"Waited: {waited(entry.get('latency_ms')) or '—'}",
    ]
    if entry.get("host"):
        lines.insert(2, f"Host: {entry['host']}")
    if entry.get("matched_rule"):
        lines.append(f"Rule: {entry['matched_rule']}")
    if entry.get("message"):
        lines.append(f"Message: {entry['message']}")
    if entry.get("decision_reason"):
        lines.append(f"Why the agent asked: {entry['decision_reason']}")
    asked, ran = entry.get("original_input"), entry.get("final_input")
    lines += ["", "Input as asked:", _json(asked)]
    if ran is None:
        lines += ["", "Input as run: — (did not run)" if status != PENDING else ""]
    elif ran == asked:
        lines += ["", "Input as run: as asked"]
    else:
        lines += ["", "Input as run (edited):", _json(ran)]
    if entry.get("answer_labels"):
        lines += ["", "Answers:", _json(entry["answer_labels"])]
    if entry.get("granted_updates"):
        lines += ["", "Granted with it:", _json(entry["granted_updates"])]
    return make_visible("\n".join(lines).rstrip() + "\n")


class HistoryDetail(QWidget):
    """The open row: its text, and its rules with Revoke (the rules pane's own widget).

    Signals:
        revoke_requested(str): the person clicked Revoke on the rule with this id.
    """

    revoke_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("historyDetail")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("historyDetailText")
        self.text.setAccessibleName("Decision details")
        self.text.setAccessibleDescription("The selected request whole: its input as asked "
                                           "and as run, the outcome and who decided")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText("Open a request to see it whole.")
        self.rules_header = QLabel("Session rules it ran under or granted", self)
        self.rules_header.setProperty("role", "paneHeader")
        self.rules = RulesView(self)
        self.rules.setMaximumHeight(140)
        self.rules_note = QLabel("", self)
        self.rules_note.setWordWrap(True)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.rules_header)
        layout.addWidget(self.rules)
        layout.addWidget(self.rules_note)
        self.rules.revoke_requested.connect(self.revoke_requested)
        self.show_entry(None, [], RevokeReach.NONE)

    def show_entry(self, entry: dict[str, Any] | None, rules: list[SessionRule],
                   reach: RevokeReach) -> None:
        """Show `entry` (None: nothing open) and the rules it ran under or granted."""
        self.text.setPlainText("" if entry is None else entry_text(entry))
        self.rules.set_reach(reach)
        self.rules.set_rules(rules)
        has_rules = bool(rules)
        self.rules.setVisible(has_rules)
        self.rules_header.setVisible(has_rules)
        if entry is not None and not has_rules:
            self.rules_note.setText("No session rule was involved: nothing to revoke here.")
        else:
            self.rules_note.setText("")
        self.rules_note.setVisible(bool(self.rules_note.text()))
