"""Value objects of the decision history: a filter, one row as listed, and the totals.

Plain frozen dataclasses (no pydantic): the history window reads them, and the store
(`store.history`) makes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

PENDING = "pending"
"""The outcome filter's word for a request that has no decision."""

THIS_COMPUTER = ""
"""The host filter's value for requests made on this machine (their host is None)."""


@dataclass(frozen=True)
class HistoryFilter:
    """Which ledger requests to list: a host, a session, an outcome, a decider and some
    text.

    None (or an empty text) means "any"; `host` is a remote host's name or
    `THIS_COMPUTER`. `outcome` is a `DecisionKind` value or
    `PENDING`; `decided_by` a `DecidedBy` value; `since` see `since_for`. `text` is
    matched, case-insensitively for ASCII, in the tool, the session's name, the title,
    the rule, the message and the input as asked and as run.
    """

    session_id: str | None = None
    outcome: str | None = None
    decided_by: str | None = None
    text: str = ""
    since: str | None = None
    """Only requests received at or after this time (`encode_time` form)."""
    host: str | None = None


@dataclass(frozen=True)
class HistoryRow:
    """One request as the history list shows it (inputs cut short; see `full` in the
    detail for the whole entry)."""

    seq: int
    request_id: str
    session_id: str
    session_name: str
    tool_name: str
    title: str | None
    outcome: str | None
    decided_by: str | None
    who: str
    received_at: str
    decided_at: str | None
    latency_ms: float | None
    matched_rule: str | None
    asked: str
    ran: str | None
    edited: bool
    host: str | None = None
    """The remote host the request came from (None: this machine)."""
    device: str | None = None
    """The paired phone a person answered on (None: at the desk); `who` names it too."""

    @property
    def status(self) -> str:
        """The outcome, or `PENDING`."""
        return self.outcome or PENDING


@dataclass(frozen=True)
class HistoryTotals:
    """How many requests match a filter, per outcome and per decider (in words)."""

    total: int = 0
    by_outcome: dict[str, int] = field(default_factory=dict)
    by_decider: dict[str, int] = field(default_factory=dict)
    approved_by_you: int = 0
    """Allowed (once or for the session) by the person."""
    ran_without_you: int = 0
    """Allowed by anyone else: the agent's CLI under its grant (or, in older ledgers, a
    session rule)."""


def since_for(choice: str, now: datetime | None = None) -> str | None:
    """The `HistoryFilter.since` of a "When" choice: "today" (since local midnight),
    "week" (the last 7 days), anything else None (any time)."""
    now = now or datetime.now().astimezone()
    if choice == "today":
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    elif choice == "week":
        start = now - timedelta(days=7)
    else:
        return None
    return start.astimezone(UTC).isoformat(timespec="microseconds")
