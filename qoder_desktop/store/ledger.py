"""The decision ledger: every approval request, its outcome, and every tool call seen.

`Ledger` writes into the `storage.Database`. A request is written as *pending* the
moment it arrives, so a crash while a person is still deciding leaves a visible trace;
its decision is written (and synced) before the answer goes back to the agent. Tool
calls that never needed a decision are seen through hooks and written as tool events;
one the agent's CLI allowed under a session grant it holds also gets an approval row
(decided by the CLI, with the rule we read it as), so the ledger shows why it ran. On
the event loop, `start_request` only queues a request's row (the broker asks the person
meanwhile) and `write_decision` waits for the database's writer thread without blocking
the loop; `post_tool_event`/`post_rule_allowed` do not wait at all (the agent's hook
answer never waits on a disk sync).

Exporting it (CSV, JSON Lines, the ``qoder-desktop ledger export`` command) lives in
`store.ledger_export`.
"""

from __future__ import annotations

from concurrent.futures import Future
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, computed_field

from qoder_desktop.domain.hook_events import ToolEventPhase
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    DecidedBy,
    Decision,
    DecisionKind,
    RequestKind,
    utc_now,
)
from qoder_desktop.store.database import (
    Database,
    StorageError,
    decode_json,
    decode_optional_time,
    decode_time,
    encode_json,
    encode_time,
)

_LABELS = TypeAdapter(dict[str, list[str]])


def cli_grant_message(rule: str) -> str:
    """The ledger's message for a call the agent's CLI ran under its own session grant."""
    return f"Run by the agent's CLI under its session grant; we read it as {rule}."


DECIDER_WORDS: dict[DecidedBy, str] = {
    DecidedBy.USER: "you",
    DecidedBy.CLI: "the agent's CLI, under its session grant",
    DecidedBy.SESSION_RULE: "a session rule you made",
    DecidedBy.WITHDRAWN: "nobody: withdrawn before an answer",
    DecidedBy.ERROR: "nobody: an error, so denied",
}
"""Who decided, in words, per `DecidedBy` (the history's totals; `who_decided` adds the
rule where there is one)."""


def who_decided(decided_by: DecidedBy | None, outcome: DecisionKind | None,
                rule: str | None, device: str | None = None) -> str:
    """Who decided a ledger row, in words (for the export and history views); a person's
    answer from a paired phone names it: "you, on Pixel 7 (3f9a1c)"."""
    if outcome is None or decided_by is None:
        return ""
    if decided_by is DecidedBy.USER:
        return f"{DECIDER_WORDS[decided_by]}, on {device}" if device else DECIDER_WORDS[
            decided_by]
    if decided_by is DecidedBy.CLI:
        reading = f" (we read it as {rule})" if rule else ""
        return f"{DECIDER_WORDS[decided_by]}{reading}"
    if decided_by is DecidedBy.SESSION_RULE:
        if outcome.allows:  # only older ledgers: an allow is a person's or the CLI's
            return f"allowed under the session rule {rule or '?'} (an older record)"
        return f"denied by the session rule {rule or '?'}"
    return DECIDER_WORDS.get(decided_by, DECIDER_WORDS[DecidedBy.ERROR])


class LedgerError(StorageError):
    """A ledger write that would falsify the record (for example a second decision)."""


class LedgerEntry(BaseModel):
    """One line of the ledger: an approval request (pending or decided) or a tool event.

    For ``entry_type == "tool_event"`` the decision fields are None and `original_input`
    holds the input the hook saw.
    """

    model_config = ConfigDict(frozen=True)

    entry_type: Literal["approval", "tool_event"]
    entry_id: str
    session_id: str
    session_name: str | None = None
    backend: Backend | None = None
    request_kind: RequestKind | None = None
    phase: ToolEventPhase | None = None
    tool_name: str
    tool_use_id: str | None = None
    agent_id: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    decision_reason: str | None = None
    blocked_path: str | None = None
    cwd: str | None = None
    host: str | None = None
    """The remote host the request came from (None: this machine)."""
    suggestions: list[dict[str, Any]] | None = None
    original_input: dict[str, Any] | None = None
    recorded_at: datetime
    received_at: datetime | None = None
    outcome: DecisionKind | None = None
    decided_by: DecidedBy | None = None
    device: str | None = None
    """The paired phone a person answered on, as its label (None: at the desk)."""
    final_input: dict[str, Any] | None = None
    message: str | None = None
    interrupt: bool | None = None
    latency_ms: float | None = None
    matched_rule: str | None = None
    granted_updates: list[dict[str, Any]] | None = None
    answer_labels: dict[str, list[str]] | None = None
    decided_at: datetime | None = None
    detail: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> str:
        """``pending`` until decided, then the outcome; the hook phase for tool events."""
        if self.entry_type == "tool_event":
            return self.phase.value if self.phase else "event"
        return self.outcome.value if self.outcome else "pending"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def who(self) -> str:
        """Who decided, in words ("you", "the agent's CLI, under its session grant (we
        read it as Bash(x))", …); '' while pending and for tool events."""
        return who_decided(self.decided_by, self.outcome, self.matched_rule, self.device)

    @property
    def pending(self) -> bool:
        """True for an approval request that has no decision (yet, or ever: a crash)."""
        return self.entry_type == "approval" and self.outcome is None


_REQUEST_COLUMNS = (
    "request_id, session_id, session_name, backend, request_kind, tool_name, tool_use_id, "
    "agent_id, title, display_name, description, decision_reason, blocked_path, cwd, "
    "suggestions_json, original_input_json, received_at, recorded_at, host"
)


def _request_values(req: ApprovalRequest) -> tuple[Any, ...]:
    return (
        req.request_id, req.session_id, req.session_name, req.backend.value, req.kind.value,
        req.tool_name, req.tool_use_id, req.agent_id, req.title, req.display_name,
        req.description, req.decision_reason, req.blocked_path, req.cwd,
        encode_json([s.to_wire() for s in req.suggestions]), encode_json(req.tool_input),
        encode_time(req.received_at), encode_time(utc_now()), req.host,
    )


class Ledger:
    """Writes and reads the decision ledger of one `Database`.

    Every method commits before it returns; it may be called from any thread.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    def start_request(self, request: ApprovalRequest) -> Future[None]:
        """Queue `record_request` on the writer thread and return at once.

        A decision written later for the same request is written after this row.
        """
        return self.db.writer.queue_in_order(lambda: self.record_request(request))

    async def write_decision(self, request: ApprovalRequest, decision: Decision,
                             latency_ms: float | None = None, *,
                             request_written: Future[None]) -> None:
        """`record_decision` on the writer thread; returns once it is committed.

        Args:
            request_written: the `start_request` of this request; when it failed, this
                write fails with its error and writes nothing (no outcome is recorded for
                a request the ledger could not hold).

        Raises:
            LedgerError: the request already has a decision.
            StorageError: the write failed (or the request's own write did).
        """
        def write() -> None:
            request_written.result()  # queued before us, so done by now
            self.record_decision(request, decision, latency_ms)

        await self.db.writer.run(write)

    def post_tool_event(self, session_id: str, tool_use_id: str | None, tool_name: str,
                        tool_input: dict[str, Any] | None, phase: ToolEventPhase | str) -> None:
        """`record_tool_event` queued on the writer thread; returns at once.

        Raises:
            ValueError: `phase` is not a hook phase (checked before queueing).
        """
        checked, at = ToolEventPhase(phase), utc_now()
        self.db.writer.post(lambda: self.record_tool_event(session_id, tool_use_id, tool_name,
                                                           tool_input, checked, at=at))

    def record_request(self, request: ApprovalRequest) -> None:
        """Write a request as pending (recording the same request twice is a no-op)."""
        marks = ", ".join("?" * len(_request_values(request)))
        self.db.execute(
            f"INSERT INTO approvals ({_REQUEST_COLUMNS}) VALUES ({marks}) "
            "ON CONFLICT(request_id) DO NOTHING",
            _request_values(request), what="recording a request")

    def record_decision(self, request: ApprovalRequest, decision: Decision,
                        latency_ms: float | None = None) -> None:
        """Write a request's outcome (the request row is created if it is missing).

        Args:
            request: the request as it arrived.
            decision: its answer.
            latency_ms: time from arrival to answer.

        For a question, the labels chosen per question text (`Decision.answer_labels`)
        are kept apart from the SDK's ``"a, b"`` encoding, so labels containing ", "
        stay unambiguous.

        Raises:
            LedgerError: the request already has a decision.
        """
        answer_labels = None if decision.answer_labels is None else {
            question: list(parts) for question, parts in decision.answer_labels.items()}
        labels = None if answer_labels is None else _LABELS.validate_python(answer_labels)
        outcome = (decision.kind.value, decision.decided_by.value,
                   None if decision.final_input is None else encode_json(decision.final_input),
                   decision.message or None, int(decision.interrupt),
                   None if latency_ms is None else float(latency_ms),
                   decision.rule or request.covered_by_rule,
                   encode_json([u.to_wire() for u in decision.updates]),
                   None if labels is None else encode_json(labels),
                   encode_time(decision.decided_at), decision.device)
        decision_columns = ("outcome", "decided_by", "final_input_json", "message",
                            "interrupt", "latency_ms", "matched_rule",
                            "granted_updates_json", "answer_labels_json", "decided_at",
                            "device")
        # The pending row is there (written on arrival): set the decision columns only,
        # without encoding and sending the request (perhaps megabytes) again.
        assignments = ", ".join(f"{c} = ?" for c in decision_columns)
        cursor = self.db.execute(
            f"UPDATE approvals SET {assignments} WHERE request_id = ? AND outcome IS NULL",
            (*outcome, request.request_id), what="recording a decision")
        if cursor.rowcount == 1:
            return
        values = (*_request_values(request), *outcome)
        updates = ", ".join(f"{c} = excluded.{c}" for c in decision_columns)
        cursor = self.db.execute(
            f"INSERT INTO approvals ({_REQUEST_COLUMNS}, {', '.join(decision_columns)}) "
            f"VALUES ({', '.join('?' * len(values))}) "
            f"ON CONFLICT(request_id) DO UPDATE SET {updates} WHERE approvals.outcome IS NULL",
            values, what="recording a decision")
        if cursor.rowcount == 0:
            raise LedgerError(f"Request {request.request_id} already has a decision in the "
                              "ledger; a request is answered exactly once.")

    def record_rule_allowed(self, request: ApprovalRequest, rule: str) -> None:
        """Write an approval row for a call the agent's CLI ran under its own session grant.

        The CLI holds the session grants and decides matching calls without asking us,
        so such a call is seen only through its hooks; this row records that it ran,
        decided by the CLI (`DecidedBy.CLI`). `rule` is our reading of the grant it used
        (our matcher's, not the CLI's word), and the message says so.
        """
        decision = Decision.allow_once(dict(request.tool_input), by=DecidedBy.CLI, rule=rule)
        decision = decision.model_copy(update={"message": cli_grant_message(rule)})
        self.record_decision(request, decision)

    def post_rule_allowed(self, request: ApprovalRequest, rule: str) -> None:
        """`record_rule_allowed`, queued on the writer thread unless the call already has
        an approval row; returns at once (the agent's next call never waits for it)."""
        def write() -> None:
            if request.tool_use_id and not self.has_request(request.session_id,
                                                            request.tool_use_id):
                self.record_rule_allowed(request, rule)

        self.db.writer.post(write)

    def has_request(self, session_id: str, tool_use_id: str) -> bool:
        """True when an approval row exists for this tool call of this session."""
        row = self.db.fetchall(
            "SELECT 1 FROM approvals WHERE session_id = ? AND tool_use_id = ? LIMIT 1",
            (session_id, tool_use_id))
        return bool(row)

    def record_tool_event(self, session_id: str, tool_use_id: str | None, tool_name: str,
                          tool_input: dict[str, Any] | None, phase: ToolEventPhase | str, *,
                          detail: str | None = None, at: datetime | None = None) -> None:
        """Write a tool call seen through a hook (PreToolUse, PostToolUse, ...).

        Args:
            session_id: the session the call belongs to.
            tool_use_id: the SDK's id for the call, when known.
            tool_name: the tool.
            tool_input: the input the hook saw.
            phase: which hook saw it.
            detail: a short note, e.g. the reason of a PermissionDenied.
            at: when it happened (now when None).
        """
        self.db.execute(
            """INSERT INTO tool_events (session_id, tool_use_id, tool_name, phase,
                   input_json, detail, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)""",
            (session_id, tool_use_id, tool_name, ToolEventPhase(phase).value,
             encode_json(tool_input or {}), detail, encode_time(at or utc_now())),
            what="recording a tool event")

    def entries(self, session_id: str | None = None, *,
                include_tool_events: bool = True) -> list[LedgerEntry]:
        """The ledger (of one session, or all), oldest first (queued writes included)."""
        self.db.flush()
        where, params = ("WHERE session_id = ?", (session_id,)) if session_id else ("", ())
        rows = self.db.fetchall(f"SELECT * FROM approvals {where}", params)
        result = [approval_entry(row) for row in rows]
        if include_tool_events:
            # The session's name comes from the sessions table (one place for it).
            rows = self.db.fetchall(
                "SELECT tool_events.*, sessions.name AS session_name FROM tool_events "
                "LEFT JOIN sessions USING (session_id) "
                f"{where.replace('session_id', 'tool_events.session_id')}", params)
            result.extend(_tool_event(row) for row in rows)
        result.sort(key=lambda e: (e.recorded_at, e.entry_type == "tool_event"))
        return result

    def pending(self, session_id: str | None = None) -> list[LedgerEntry]:
        """Requests that were never decided (e.g. the app died while they waited)."""
        return [e for e in self.entries(session_id, include_tool_events=False) if e.pending]


def ledger_entries(db: Database, session_id: str | None = None) -> list[LedgerEntry]:
    """The whole ledger (of one session, or all), oldest first."""
    return Ledger(db).entries(session_id)


def approval_entry(row: Any) -> LedgerEntry:
    """One ``approvals`` row (all columns, by name) as a `LedgerEntry`."""
    interrupt = row["interrupt"]
    return LedgerEntry(
        entry_type="approval", entry_id=row["request_id"], session_id=row["session_id"],
        session_name=row["session_name"], backend=Backend(row["backend"]),
        request_kind=RequestKind(row["request_kind"]), tool_name=row["tool_name"],
        tool_use_id=row["tool_use_id"], agent_id=row["agent_id"], title=row["title"],
        display_name=row["display_name"], description=row["description"],
        decision_reason=row["decision_reason"], blocked_path=row["blocked_path"],
        cwd=row["cwd"], host=row["host"], suggestions=decode_json(row["suggestions_json"]),
        original_input=decode_json(row["original_input_json"]),
        recorded_at=decode_time(row["recorded_at"]),
        received_at=decode_time(row["received_at"]),
        outcome=row["outcome"], decided_by=row["decided_by"], device=row["device"],
        final_input=decode_json(row["final_input_json"]), message=row["message"],
        interrupt=None if interrupt is None else bool(interrupt),
        latency_ms=row["latency_ms"], matched_rule=row["matched_rule"],
        granted_updates=decode_json(row["granted_updates_json"]),
        answer_labels=decode_json(row["answer_labels_json"]),
        decided_at=decode_optional_time(row["decided_at"]))


def _tool_event(row: Any) -> LedgerEntry:
    return LedgerEntry(
        entry_type="tool_event", entry_id=f"event-{row['seq']}", session_id=row["session_id"],
        session_name=row["session_name"],
        phase=ToolEventPhase(row["phase"]), tool_name=row["tool_name"],
        tool_use_id=row["tool_use_id"], original_input=decode_json(row["input_json"]),
        recorded_at=decode_time(row["recorded_at"]), detail=row["detail"])
