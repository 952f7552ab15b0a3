"""One interface per way in: how an agent's permission prompt becomes a request and
how its answer goes back.

Every way an agent asks us (an SDK session's ``can_use_tool``, a terminal agent's
``PermissionRequest`` hook, the MCP gateway's ``approve`` tool; remote hosts and a phone
next) is an `ApprovalSource`. A source says only what differs on its wire: the session a
call belongs to, the call in its own words (`ToolCall`), how a decision is written for
its agent (`encode`), where revoked rules are kept (`removals`) and, when something sits
between us and the CLI that is stricter, its check (`update_problem`). Everything else is
here once:

- the request: `build_request` (the one builder of `ApprovalRequest` from a way in);
- the CLI's suggestions: `parse_suggestions` (one parser) with one check
  (`ApprovalSource.update_problem`, by default `wire_problem`): a malformed suggestion is
  dropped with a log line and the person is still asked; the broker drops a grant's
  update on the same check (`ApprovalBroker.request`'s second argument);
- withdrawal: `ApprovalSource.ask` and `Withdrawal` (the agent hangs up, it is answered
  elsewhere, nobody answers in time, the session ends): the broker records it, once;
- the result: `ApprovalSource.answer_for` encodes a decision with the revoked rules it
  carries (`permission_result` is the JSON both CLIs take), and `delivered` marks them
  as told once the way in knows the CLI got them.

The call and its request are in `approval.calls` (re-exported here). Qt-free and
SDK-free: a way in imports this, never the other way round.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.approval.calls import (
    SessionRef,
    ToolCall,
    UpdateCheck,
    build_request,
    parse_suggestions,
    wire_problem,
)
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    DecisionKind,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
    SessionRule,
)

log = logging.getLogger(__name__)

# -- the result, as both CLIs take it ------------------------------------------------------


def deny_result(message: str, *, interrupt: bool = False) -> dict[str, Any]:
    """A deny permission result."""
    result: dict[str, Any] = {"behavior": "deny",
                              "message": message.strip() or "Qoder Desktop denied this."}
    if interrupt:
        result["interrupt"] = True
    return result


def removal_update(revoked: Sequence[RuleValue]) -> dict[str, Any]:
    """The session update that tells a CLI to drop allow rules revoked in the app."""
    return PermissionSuggestion(type="removeRules", rules=tuple(revoked),
                                behavior=RuleBehavior.ALLOW, destination="session").to_wire()


def permission_result(decision: Decision,
                      removals: Sequence[RuleValue] = ()) -> dict[str, Any]:
    """The permission result JSON for `decision`, as the ``--permission-prompt-tool`` of
    the gateway and the ``decision`` of a ``PermissionRequest`` hook take it.

    Args:
        decision: the answer. The broker has already dropped every update that must not
            be granted; the rest go to the CLI as ``session`` updates, so the CLI holds
            them (Claude Code 2.1.332 applies ``updatedPermissions`` from both).
        removals: allow rules revoked in the app since the last allow; an allow asks the
            CLI to remove them (a CLI can only be told inside an answer, and Claude Code
            ignores updates in a deny).
    """
    if decision.kind.allows and decision.final_input is not None:
        result: dict[str, Any] = {"behavior": "allow", "updatedInput": dict(decision.final_input)}
        forwarded = [update.model_copy(update={"destination": "session"}).to_wire()
                     for update in decision.updates]
        if removals:
            forwarded.append(removal_update(removals))
        if forwarded:
            result["updatedPermissions"] = forwarded
        return result
    return deny_result(decision.message, interrupt=decision.interrupt)


# -- withdrawal ----------------------------------------------------------------------------


class Withdrawal:
    """How a way in takes one request back before anyone answered: once, with a reason.

    Taking it back tells the broker at once (`take_back`: the broker's `withdraw`), so a
    stopping session's requests are all withdrawn in the same loop turn.
    """

    def __init__(self, request: ApprovalRequest,
                 take_back: Callable[[str], bool] = lambda _reason: False) -> None:
        self.request = request
        self.reason = ""
        self.taken = False
        """True once the broker took it back (it was waiting for a person)."""
        self.started = False
        """True once the request reached the broker."""
        self._take_back = take_back
        self._event = asyncio.Event()

    @property
    def withdrawn(self) -> bool:
        """True once the request was taken back."""
        return self._event.is_set()

    def withdraw(self, reason: str) -> None:
        """Take the request back (the first reason counts)."""
        if not self._event.is_set():
            self.reason = reason
            self.taken = self._take_back(reason)
            self._event.set()

    async def wait(self) -> None:
        """Return once the request is taken back."""
        await self._event.wait()


class Removals(Protocol):
    """Where revoked allow rules wait until an answer told the agent's CLI to drop them
    (the session hub, over `store.removals`)."""

    def removals_due(self, session_id: str) -> list[SessionRule]:
        """Revoked allow rules whose removal has not reached the session's CLI yet."""
        ...

    def removals_delivered(self, session_id: str, rule_ids: list[str]) -> None:
        """An answer carrying these removals reached the CLI."""
        ...


@dataclass(frozen=True)
class Answer:
    """A decision written for the agent, with the revoked rules it tells the CLI to drop."""

    request: ApprovalRequest
    decision: Decision
    result: Any
    removals: tuple[SessionRule, ...] = ()


# -- the interface -------------------------------------------------------------------------


class ApprovalSource(ABC):
    """One way in for permission prompts.

    A subclass passes the broker and where revoked rules are kept (the hub) to
    `__init__` and says how a decision is written for its agent (`encode`); it builds
    each request with `request_for`, asks with `ask`, answers with `answer_for` and says
    when the answer reached the CLI with `delivered`. A new way in is one such subclass.

    Args:
        broker: decides this source's requests.
        removals: where its sessions' revoked rules wait for delivery.
    """

    def __init__(self, broker: ApprovalBroker, removals: Removals) -> None:
        self.approval_broker = broker
        self.removals = removals
        self._withdrawals: dict[str, Withdrawal] = {}

    @abstractmethod
    def encode(self, decision: Decision, removals: Sequence[RuleValue]) -> Any:
        """`decision` as this way in's agent takes it; an allow also tells the CLI to
        drop `removals`. Never called for a withdrawal (see `ask`)."""

    def update_problem(self, update: PermissionSuggestion) -> str | None:
        """The one check of an update from or to the CLI: why it would not reach the CLI
        as sent (None: it would). A source whose answers pass through an SDK adds that
        SDK's own conversion."""
        return wire_problem(update)

    # -- the shared path -------------------------------------------------------------------

    def request_for(self, session: SessionRef, call: ToolCall) -> ApprovalRequest:
        """The request for `call` of `session`, its suggestions parsed and checked."""
        return build_request(session, call, self.update_problem)

    def open_requests(self) -> list[ApprovalRequest]:
        """Requests of this source asked and not yet answered or taken back."""
        return [entry.request for entry in self._withdrawals.values()
                if not entry.withdrawn]

    def withdraw_where(self, reason: str,
                       which: Callable[[ApprovalRequest], bool] = lambda _r: True,
                       *, first_only: bool = False) -> int:
        """Take back this source's open requests `which` selects; how many."""
        count = 0
        for entry in list(self._withdrawals.values()):
            if entry.withdrawn or not which(entry.request):
                continue
            entry.withdraw(reason)
            count += 1
            if first_only:
                break
        return count

    async def ask(self, request: ApprovalRequest, *, within: float | None = None,
                  expired: str = "", gone: Callable[[], Awaitable[str]] | None = None,
                  ) -> Decision:
        """The broker's decision for `request`, or a withdrawal (`Decision.withdrawn`).

        Withdrawn when `withdraw_where` selects it, when `within` seconds pass (`expired`
        is the reason), or when `gone` returns (the agent's side went away; it returns
        the reason). Cancelling `ask` (the SDK or the MCP client cancelled) withdraws it
        too and re-raises. The broker records each withdrawal, once. Any other failure
        is a deny with a message.
        """
        broker = self.approval_broker
        entry = Withdrawal(request, lambda reason: broker.withdraw(request.request_id, reason))
        opened = self._withdrawals
        opened.setdefault(request.request_id, entry)  # (the broker refuses a duplicate id)

        async def asking_broker() -> Decision:
            entry.started = True
            return await broker.request(request, self.update_problem)

        asking = asyncio.ensure_future(asking_broker())
        watchers = [asyncio.ensure_future(entry.wait())]
        if gone is not None:
            watchers.append(asyncio.ensure_future(_withdraw_when(gone, entry)))
        try:
            done, _ = await asyncio.wait({asking, *watchers}, timeout=within,
                                         return_when=asyncio.FIRST_COMPLETED)
            if asking not in done:
                entry.withdraw(expired or "Nobody answered in time.")
                if not entry.taken:  # it may have reached the broker since
                    entry.taken = broker.withdraw(request.request_id, entry.reason)
                if not entry.taken and not entry.started:
                    asking.cancel()  # it never reached the broker
                # Otherwise it was answered already and its answer is being recorded:
                # that answer stands (cancelling would cut the ledger write short).
            try:
                return await asking
            except asyncio.CancelledError:
                if asking.cancelled() and entry.withdrawn and not _being_cancelled():
                    return Decision.withdrawn(entry.reason)
                raise
            except Exception as exc:  # the broker never raises; fail closed if it does
                log.exception("asking the broker failed for request %s", request.request_id)
                return Decision.error(f"Qoder Desktop failed while asking: {exc}")
        except asyncio.CancelledError:
            if not asking.done():
                if entry.started and not broker.is_pending(request.request_id):
                    # Answered or withdrawn already, its outcome being written: cutting
                    # that short would lose the ledger row. Let it finish.
                    await asyncio.gather(asyncio.shield(asking), return_exceptions=True)
                else:
                    asking.cancel()  # the broker records the withdrawal
                    await asyncio.gather(asking, return_exceptions=True)
            raise
        finally:
            for task in watchers:
                task.cancel()
            if opened.get(request.request_id) is entry:
                opened.pop(request.request_id)

    def answer_for(self, request: ApprovalRequest, decision: Decision) -> Answer:
        """`decision` encoded for the agent; an allow carries the session's revoked rules
        that the CLI still holds (a CLI can only be told inside an allow)."""
        due = tuple(self.removals.removals_due(request.session_id)) if (
            decision.kind.allows) else ()
        return Answer(request, decision, self.encode(decision, [rule.rule for rule in due]),
                      due)

    def delivered(self, answer: Answer) -> None:
        """The answer reached the CLI: its removals are recorded as told."""
        if answer.removals:
            self.removals.removals_delivered(answer.request.session_id,
                                             [rule.rule_id for rule in answer.removals])


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _withdraw_when(gone: Callable[[], Awaitable[str]], entry: Withdrawal) -> None:
    entry.withdraw(await gone())


def is_withdrawn(decision: Decision) -> bool:
    """True for a request taken back before an answer (nothing goes to the agent)."""
    return decision.kind is DecisionKind.WITHDRAWN


__all__ = ["Answer", "ApprovalSource", "Removals", "SessionRef", "ToolCall", "UpdateCheck",
           "Withdrawal", "build_request", "deny_result", "is_withdrawn", "parse_suggestions",
           "permission_result", "removal_update", "wire_problem"]
