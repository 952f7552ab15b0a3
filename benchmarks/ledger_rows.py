"""A large decision ledger, generated fast (one ``executemany``): for the history
window's benchmark and tests.

`fill_ledger` writes `count` requests over a few sessions, in arrival order, with a
realistic spread: most allowed once by the person, some for the session, some run by the
agent's CLI under a grant, denies, a few withdrawn and errors, a few still pending. Every
`MARKER_EVERY`-th command carries `MARKER` (a rare word to filter on).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from qoder_desktop.store.database import Database, encode_time

SESSIONS = 8
MARKER = "zebra-needle"
MARKER_EVERY = 997
GRANT = "Bash(npm test:*)"

_OUTCOMES: list[tuple[str | None, str | None]] = (
    [("allow_once", "user")] * 10 + [("allow_session", "user")] * 2 + [("allow_once", "cli")] * 5
    + [("deny", "user")] * 2 + [("deny", "session_rule")] + [("deny_interrupt", "user")]
    + [("withdrawn", "withdrawn")] + [("error", "error")] + [(None, None)])


def session_id(index: int) -> str:
    """The id of generated session `index`."""
    return f"bench-session-{index}"


def fill_ledger(path: Path, count: int) -> Path:
    """Create the database at `path` (migrated) and write `count` requests into it."""
    start = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
    with Database.open(path) as db:
        with db.transaction("generating sessions") as conn:
            for index in range(SESSIONS):
                at = encode_time(start)
                conn.execute(
                    "INSERT INTO sessions (session_id, name, backend, cwd, permission_mode, "
                    "state, error, created_at, updated_at) VALUES (?, ?, 'claude', "
                    "'/work/project', 'default', 'stopped', NULL, ?, ?)",
                    (session_id(index), f"Session {index}", at, at))
                conn.execute(
                    "INSERT INTO session_rules (rule_id, session_id, behavior, tool_name, "
                    "rule_content, granted_by, granted_at) VALUES (?, ?, 'allow', 'Bash', "
                    "'npm test:*', 'user', ?)", (f"rule-{index}", session_id(index), at))
        rows: list[tuple[Any, ...]] = []
        for n in range(count):
            outcome, by = _OUTCOMES[n % len(_OUTCOMES)]
            sid = n % SESSIONS
            command = f"npm test -- --shard {n}" if by == "cli" else f"ls -la build/{n}"
            if n % MARKER_EVERY == 0:
                command += f" # {MARKER}"
            asked = json.dumps({"command": command, "description": "List the build"},
                               sort_keys=True)
            ran = None if outcome is None else (
                asked if n % 50 else json.dumps({"command": command + " --dry-run"}))
            received = start + timedelta(seconds=n)
            decided = None if outcome is None else received + timedelta(milliseconds=800 + n % 5000)
            rule = GRANT if by in ("cli", "session_rule") else None
            grants = json.dumps([{"type": "addRules", "behavior": "allow",
                                  "destination": "session",
                                  "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}]}]
                                ) if outcome == "allow_session" else "[]"
            rows.append((
                f"req-{n}", session_id(sid), f"Session {sid}", "claude", "tool", "Bash",
                f"toolu_{n}", None, f"Run {command[:40]}", None, None, None, None,
                "/work/project", "[]", asked, encode_time(received), encode_time(received),
                outcome, by, ran, None, None if outcome is None else 0,
                None if decided is None else (decided - received).total_seconds() * 1000,
                rule, None if outcome is None else grants, None,
                None if decided is None else encode_time(decided)))
        with db.transaction("generating the ledger") as conn:
            conn.executemany(
                "INSERT INTO approvals (request_id, session_id, session_name, backend, "
                "request_kind, tool_name, tool_use_id, agent_id, title, display_name, "
                "description, decision_reason, blocked_path, cwd, suggestions_json, "
                "original_input_json, received_at, recorded_at, outcome, decided_by, "
                "final_input_json, message, interrupt, latency_ms, matched_rule, "
                "granted_updates_json, answer_labels_json, decided_at) "
                f"VALUES ({', '.join('?' * 28)})", rows)
    return path
