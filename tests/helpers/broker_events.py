"""Routing broker events into queues a test can await (the person's side of the broker)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Decision

Finished = tuple[BrokerEvent, ApprovalRequest, Decision | None]


def route_broker_events(broker: ApprovalBroker, added: asyncio.Queue[ApprovalRequest],
                        finished: asyncio.Queue[Finished]) -> Callable[[], None]:
    """Put requests that wait for a person in `added`, answered/withdrawn ones in `finished`.

    Returns the broker's unsubscribe function.
    """

    def on_broker(event: BrokerEvent, request: ApprovalRequest,
                  decision: Decision | None) -> None:
        if event is BrokerEvent.ADDED:
            added.put_nowait(request)
        else:
            finished.put_nowait((event, request, decision))

    return broker.subscribe(on_broker)
