"""Revoked allow rules the agent's CLI may still hold, until their removal reaches it.

A CLI holds the session grants it was sent and can only be told to drop one inside an
answer to one of its requests (an allow: Claude Code ignores updates in a deny). So a
revoked allow rule is *pending* until an answer carrying its removal was handed to the
CLI, then *delivered* (``removal_delivered_at``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from qoder_desktop.store.database import Database, encode_time

if TYPE_CHECKING:
    from qoder_desktop.domain.models import SessionRule


def removals_due(db: Database, session_id: str) -> list[SessionRule]:
    """The session's revoked allow rules whose removal has not reached its CLI."""
    return [rule for rule in db.all_rules(session_id) if rule.removal_pending]


def mark_delivered(db: Database, rule_ids: Iterable[str], at: datetime | None = None) -> int:
    """Record that the removal of these revoked rules reached the CLI; how many changed.

    Rules that are active, or already delivered, are left as they are.
    """
    from qoder_desktop.domain.models import utc_now

    ids = list(dict.fromkeys(rule_ids))
    if not ids:
        return 0
    when = encode_time(at or utc_now())
    changed = 0
    with db.transaction("recording a delivered revocation") as conn:
        for rule_id in ids:
            changed += conn.execute(
                """UPDATE session_rules SET removal_delivered_at = ?
                   WHERE rule_id = ? AND revoked_at IS NOT NULL
                     AND removal_delivered_at IS NULL""", (when, rule_id)).rowcount
    return changed
