"""Routing broker events into queues a test can await (the person's side of the broker),
and recording them (`Recorder`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision
from qoder_desktop.store.ledger import Ledger

Finished = tuple[BrokerEvent, ApprovalRequest, Decision | None]


SESSION = "session-1"
"""The session the broker tests' requests belong to."""


def bash_request(command: str, **fields: object) -> ApprovalRequest:
    """A Bash request of `SESSION` in /tmp/ws (`fields` override the rest)."""
    return ApprovalRequest(session_id=SESSION, session_name="demo", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command}, cwd="/tmp/ws",
                           **fields)  # type: ignore[arg-type]


def route_broker_events(broker: ApprovalBroker, added: asyncio.Queue[ApprovalRequest],
                        finished: asyncio.Queue[Finished],
                        updated: asyncio.Queue[ApprovalRequest] | None = None
                        ) -> Callable[[], None]:
    """Put requests that wait for a person in `added`, answered/withdrawn ones in
    `finished`, and waiting requests that changed (UPDATED) in `updated` if given.

    Returns the broker's unsubscribe function.
    """

    def on_broker(event: BrokerEvent, request: ApprovalRequest,
                  decision: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            added.put_nowait(request)
        elif event is BrokerEvent.UPDATED:
            if updated is not None:
                updated.put_nowait(request)
        else:
            finished.put_nowait((event, request, decision))

    return broker.subscribe(on_broker)


class Recorder:
    """Collects broker events and lets a test wait for the next ADDED request."""

    def __init__(self, broker: ApprovalBroker) -> None:
        self.events: list[tuple[BrokerEvent, str, Decision | None]] = []
        self.added: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
        self.updated: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
        broker.subscribe(self)

    def __call__(self, event: BrokerEvent, request: ApprovalRequest,
                 decision: Decision | None) -> None:
        self.events.append((event, request.request_id, decision))
        if event is BrokerEvent.ADDED:
            self.added.put_nowait(request)
        elif event is BrokerEvent.UPDATED:
            self.updated.put_nowait(request)

    async def next_updated(self) -> ApprovalRequest:
        """The next waiting request that changed (fails after 5 s)."""
        return await asyncio.wait_for(self.updated.get(), 5)

    async def next_added(self) -> ApprovalRequest:
        """The next request that waits for a person (fails after 5 s)."""
        return await asyncio.wait_for(self.added.get(), 5)


def watch_decision_writes(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """An event set as soon as the broker starts writing a decision to `ledger` (the
    write itself goes on as before): proof the loop got that far while the disk waits."""
    writing = asyncio.Event()
    write_decision = ledger.write_decision

    async def watched(*args: Any, **kwargs: Any) -> None:
        writing.set()
        await write_decision(*args, **kwargs)

    monkeypatch.setattr(ledger, "write_decision", watched)
    return writing
