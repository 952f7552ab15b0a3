"""The store's tables and how they grew: `MIGRATIONS`, the ordered schema steps that
`database.Database` applies once each (``PRAGMA user_version`` counts them). A step is
only ever added at the end; one already shipped is never edited.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, ...]] = [
    # 1: sessions, session rules, the approval ledger and hook-seen tool events.
    (
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            backend TEXT NOT NULL,
            cwd TEXT NOT NULL,
            permission_mode TEXT NOT NULL,
            state TEXT NOT NULL,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        """CREATE TABLE session_rules (
            rule_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
            behavior TEXT NOT NULL CHECK (behavior IN ('allow', 'deny', 'ask')),
            tool_name TEXT NOT NULL,
            rule_content TEXT,
            granted_by TEXT NOT NULL,
            granted_at TEXT NOT NULL,
            revoked_at TEXT,
            revoked_by TEXT)""",
        "CREATE INDEX session_rules_by_session ON session_rules(session_id, granted_at)",
        """CREATE TABLE approvals (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            request_id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL,
            session_name TEXT NOT NULL,
            backend TEXT NOT NULL,
            request_kind TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            tool_use_id TEXT,
            agent_id TEXT,
            title TEXT,
            display_name TEXT,
            description TEXT,
            decision_reason TEXT,
            blocked_path TEXT,
            cwd TEXT,
            suggestions_json TEXT NOT NULL,
            original_input_json TEXT NOT NULL,
            received_at TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            outcome TEXT,
            decided_by TEXT,
            final_input_json TEXT,
            message TEXT,
            interrupt INTEGER,
            latency_ms REAL,
            matched_rule TEXT,
            granted_updates_json TEXT,
            answer_labels_json TEXT,
            decided_at TEXT)""",
        "CREATE INDEX approvals_by_session ON approvals(session_id, recorded_at)",
        """CREATE TABLE tool_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            tool_use_id TEXT,
            tool_name TEXT NOT NULL,
            phase TEXT NOT NULL,
            input_json TEXT NOT NULL,
            detail TEXT,
            recorded_at TEXT NOT NULL)""",
        "CREATE INDEX tool_events_by_session ON tool_events(session_id, recorded_at)",
    ),
    # 2: when the removal of a revoked allow rule reached the agent (see store.removals).
    ("ALTER TABLE session_rules ADD COLUMN removal_delivered_at TEXT",),
    # 3: the history window: pages filtered by session, outcome, decider or day read an
    # index newest first; its totals (per outcome and decider) read covering indexes.
    ("CREATE INDEX approvals_by_session_seq ON approvals(session_id, seq)",
     "CREATE INDEX approvals_by_outcome_seq ON approvals(outcome, seq)",
     "CREATE INDEX approvals_by_decider_seq ON approvals(decided_by, seq)",
     "CREATE INDEX approvals_by_outcome ON approvals(outcome, decided_by)",
     "CREATE INDEX approvals_by_session_outcome ON approvals(session_id, outcome, decided_by)",
     "CREATE INDEX approvals_by_received ON approvals(received_at)"),
    # 4: the remote host a request and a terminal session came from (NULL: this machine).
    ("ALTER TABLE approvals ADD COLUMN host TEXT",
     "ALTER TABLE sessions ADD COLUMN host TEXT"),
    # 5: the history window's host filter reads an index newest first, and its list of
    # hosts skips from one host to the next instead of reading every request.
    ("CREATE INDEX approvals_by_host_seq ON approvals(host, seq)",),
    # 6: the phones paired for Away mode; `mac` authenticates each row (see away.devices).
    ("""CREATE TABLE devices (
            device_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            public_key BLOB NOT NULL,
            paired_at TEXT NOT NULL,
            last_used_at TEXT,
            revoked_at TEXT,
            mac BLOB NOT NULL)""",),
    # 7: the paired device a person answered on (NULL: at the desk).
    ("ALTER TABLE approvals ADD COLUMN device TEXT",),
]
"""Schema steps; step N (1-based) brings ``user_version`` from N-1 to N."""
