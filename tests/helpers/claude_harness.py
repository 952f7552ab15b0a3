"""The end-to-end harness object: a hub with the real CLI behind it (see tests/e2e)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    PermissionSuggestion,
    RuleBehavior,
    RuleValue,
)
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.scripted_model.server import ThreadedScriptedModel
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger

WAIT = 90.0
"""Seconds a test waits for the CLI before it fails instead of hanging."""



def session_grant(rule: str) -> tuple[PermissionSuggestion, ...]:
    """The suggestion "allow `rule` for this session", as the CLI sends it."""
    return (PermissionSuggestion(type="addRules", rules=(RuleValue.parse(rule),),
                                 behavior=RuleBehavior.ALLOW, destination="session"),)


@dataclass
class Harness:
    """A hub with the real CLI behind it, and the requests it raised, in order."""

    hub: SessionHub
    broker: ApprovalBroker
    db: Database
    ledger: Ledger
    workspace: Path
    model: ThreadedScriptedModel
    requests: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[tuple[BrokerEvent, ApprovalRequest, Decision | None]] = field(
        default_factory=asyncio.Queue)
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    async def next_request(self) -> ApprovalRequest:
        """The next request that waits for a person."""
        return await asyncio.wait_for(self.requests.get(), WAIT)

    async def next_finished(self) -> tuple[BrokerEvent, ApprovalRequest, Decision | None]:
        """The next request that was answered or withdrawn."""
        return await asyncio.wait_for(self.finished.get(), WAIT)

    async def start(self, scenario: str, prompt: str = "Go ahead.", **options: Any) -> str:
        """Start a session that plays `scenario`; returns its id."""
        self.idle.clear()
        info = await self.hub.start_session(SessionOptions(
            prompt=prompt, cwd=str(self.workspace), scenario=scenario, name=scenario, **options))
        return info.session_id

    async def wait_idle(self) -> None:
        """Wait until the session's turn has ended."""
        await asyncio.wait_for(self.idle.wait(), WAIT)
        self.idle.clear()

    def results_for(self, tool_use_id: str | None) -> list[str]:
        """What the model received as the result of one tool call."""
        return [r.content for r in self.model.tool_results if r.tool_use_id == tool_use_id]


