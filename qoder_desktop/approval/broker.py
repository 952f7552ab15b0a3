"""The approval broker: one queue for every session's requests, oldest first.

A backend adapter calls `await broker.request(req)` from inside the SDK's
`can_use_tool` callback. The broker first asks the session rules; if none decides, it
queues the request, tells its subscribers (the UI) and waits for `answer()`. Each
request is answered exactly once. If the awaiting task is cancelled (the agent withdrew
the request), the request is recorded as withdrawn and subscribers hear of it at once.
Any error on the way is a deny with a message: the broker fails closed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from qoder_desktop.domain.models import (
    ApprovalRequest,
    DecidedBy,
    Decision,
    DecisionKind,
    RequestKind,
    RuleBehavior,
    SessionRule,
)
from qoder_desktop.rules import matcher as rules

log = logging.getLogger(__name__)


class BrokerEvent(StrEnum):
    """What happened to a request, as told to subscribers."""

    ADDED = "added"
    ANSWERED = "answered"
    WITHDRAWN = "withdrawn"


Subscriber = Callable[[BrokerEvent, ApprovalRequest, Decision | None], None]
"""Called synchronously with (event, request, decision); decision is None for ADDED."""


class RuleStore(Protocol):
    """Where session rules live (the SQLite store in the app)."""

    def active_rules(self, session_id: str) -> list[SessionRule]:
        """The session's rules that are not revoked."""
        ...

    def add_rules(self, new_rules: Iterable[SessionRule]) -> None:
        """Persist newly granted rules."""
        ...


class Ledger(Protocol):
    """Where every request and its outcome is written before the answer goes back."""

    def record_request(self, request: ApprovalRequest) -> None:
        """Write a request as pending."""
        ...

    def record_decision(self, request: ApprovalRequest, decision: Decision,
                        latency_ms: float) -> None:
        """Write a request's outcome."""
        ...


class AlreadyAnswered(RuntimeError):
    """A second answer for a request that was already answered or withdrawn."""


@dataclass
class _Pending:
    request: ApprovalRequest
    future: asyncio.Future[Decision]
    started: float = field(default_factory=time.monotonic)


class ApprovalBroker:
    """Queues approval requests from all sessions and hands out their decisions.

    Signals (as subscriber events):
        ADDED: a request waits for a person.
        ANSWERED: a request got its decision (by a person, a rule or an error).
        WITHDRAWN: the agent or the app took the request back before an answer.
    """

    def __init__(self, rule_store: RuleStore, ledger: Ledger) -> None:
        self._rule_store = rule_store
        self._ledger = ledger
        self._pending: dict[str, _Pending] = {}
        self._subscribers: list[Subscriber] = []
        self._paused_sessions: set[str] = set()

    # -- subscribers -------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it again."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def _notify(self, event: BrokerEvent, request: ApprovalRequest,
                decision: Decision | None) -> None:
        for subscriber in list(self._subscribers):
            subscriber(event, request, decision)

    def _notify_quietly(self, event: BrokerEvent, request: ApprovalRequest,
                        decision: Decision | None) -> None:
        """Notify, logging (not raising) subscriber errors: the answer is already fixed."""
        try:
            self._notify(event, request, decision)
        except Exception:
            log.exception("a subscriber failed on %s of request %s", event, request.request_id)

    # -- queries -----------------------------------------------------------------------

    def pending(self) -> list[ApprovalRequest]:
        """Requests waiting for a person, oldest first."""
        entries = sorted(self._pending.values(), key=lambda p: (p.request.received_at, p.started))
        return [entry.request for entry in entries if not entry.future.done()]

    def is_pending(self, request_id: str) -> bool:
        """True while `request_id` waits for an answer."""
        entry = self._pending.get(request_id)
        return entry is not None and not entry.future.done()

    # -- auto-rules pause (after "deny and stop") --------------------------------------

    def pause_rules(self, session_id: str) -> None:
        """Stop session rules from auto-allowing in this session until `resume_rules`."""
        self._paused_sessions.add(session_id)

    def resume_rules(self, session_id: str) -> None:
        """Let session rules answer again (the user started a new turn)."""
        self._paused_sessions.discard(session_id)

    # -- the path of one request -------------------------------------------------------

    async def request(self, request: ApprovalRequest) -> Decision:
        """Decide `request`: by a session rule, or by a person through the queue.

        Never raises except `CancelledError` (after recording the request as withdrawn);
        every other failure becomes a deny with a message.
        """
        started = time.monotonic()
        if request.request_id in self._pending:
            log.warning("duplicate request id %s refused", request.request_id)
            return Decision.error(
                "Qoder Desktop refused a duplicate permission request (the same id is already "
                "waiting for an answer).")
        try:
            self._ledger.record_request(request)
            decision = self._decide_by_rule(request)
            if decision is None:
                decision = await self._ask_person(request)
        except asyncio.CancelledError:
            decision = Decision.withdrawn()
            self._finish(request, decision, started)
            raise
        except Exception as exc:
            log.exception("request %s failed", request.request_id)
            decision = Decision.error(f"Qoder Desktop failed while asking: {exc}")
        return self._finish(request, decision, started)

    def _decide_by_rule(self, request: ApprovalRequest) -> Decision | None:
        if request.kind is not RequestKind.TOOL:
            return None
        # add_dirs: the session's added directories (shell paths there count as inside);
        # none are known here yet, so a path outside request.cwd asks.
        verdict = rules.evaluate(self._rule_store.active_rules(request.session_id),
                                 request.tool_name, request.tool_input, request.cwd or ".",
                                 add_dirs=())
        if verdict is None or verdict.behavior is RuleBehavior.ASK:
            return None
        rule_text = str(verdict.rule.rule)
        if verdict.behavior is RuleBehavior.DENY:
            return Decision.deny(f"Denied by the session rule {rule_text}.",
                                 by=DecidedBy.SESSION_RULE, rule=rule_text)
        if request.session_id in self._paused_sessions:
            return None
        return Decision.allow_once(dict(request.tool_input), by=DecidedBy.SESSION_RULE,
                                   rule=rule_text)

    async def _ask_person(self, request: ApprovalRequest) -> Decision:
        loop = asyncio.get_running_loop()
        entry = _Pending(request, loop.create_future())
        self._pending[request.request_id] = entry
        try:
            self._notify(BrokerEvent.ADDED, request, None)
            return await entry.future
        finally:
            self._pending.pop(request.request_id, None)

    def _finish(self, request: ApprovalRequest, decision: Decision, started: float) -> Decision:
        """Persist the decision, then tell subscribers; a failed write turns allow into deny."""
        latency_ms = (time.monotonic() - started) * 1000.0
        try:
            if decision.kind is DecisionKind.ALLOW_SESSION:
                granted = rules.session_rules_from_updates(
                    request.session_id, decision.updates, granted_by="user")
                self._rule_store.add_rules(granted)
            self._ledger.record_decision(request, decision, latency_ms)
        except Exception as exc:
            log.exception("could not record the decision for %s", request.request_id)
            if decision.kind is not DecisionKind.WITHDRAWN:
                decision = Decision.error(
                    f"Qoder Desktop could not record the decision, so it was denied: {exc}")
        if decision.kind is DecisionKind.DENY_INTERRUPT:
            self.pause_rules(request.session_id)
        event = (BrokerEvent.WITHDRAWN if decision.kind is DecisionKind.WITHDRAWN
                 else BrokerEvent.ANSWERED)
        self._notify_quietly(event, request, decision)
        return decision

    # -- answers from the UI and the app -----------------------------------------------

    def answer(self, request_id: str, decision: Decision) -> None:
        """Answer a pending request.

        Raises:
            AlreadyAnswered: the request is not pending (answered, withdrawn or unknown).
            ValueError: `decision` is a withdrawal; use `withdraw` for that.
        """
        if decision.kind is DecisionKind.WITHDRAWN:
            raise ValueError("a person cannot answer with 'withdrawn'; use withdraw()")
        entry = self._pending.get(request_id)
        if entry is None or entry.future.done():
            raise AlreadyAnswered(f"request {request_id} is no longer waiting for an answer")
        entry.future.set_result(decision)

    def withdraw(self, request_id: str) -> bool:
        """The app takes a request back (its agent died); returns False if not pending."""
        entry = self._pending.get(request_id)
        if entry is None or entry.future.done():
            return False
        entry.future.set_result(Decision.withdrawn())
        return True

    def withdraw_session(self, session_id: str) -> int:
        """Withdraw every pending request of a session; returns how many."""
        ids = [p.request.request_id for p in self._pending.values()
               if p.request.session_id == session_id]
        return sum(self.withdraw(request_id) for request_id in ids)
