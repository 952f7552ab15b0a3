"""`QoderHarness`: scripted Qoder peers behind a real `SessionHub` (database, ledger, broker)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.broker_events import route_broker_events
from helpers.qoder_peer import WAIT, ScriptedQoderPeer
from qoder_agent_sdk import ToolPermissionContext

from qoder_desktop.agents.base import AgentSession
from qoder_desktop.agents.hub import HubEvent, SessionHub
from qoder_desktop.agents.qoder import QoderSession
from qoder_desktop.agents.sink import SessionSink
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, SessionInfo
from qoder_desktop.domain.session_options import SessionOptions, TranscriptEvent
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


class RecordingQoderSession(QoderSession):
    """A QoderSession that keeps every `ToolPermissionContext` the SDK gave it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.contexts: list[ToolPermissionContext] = []

    async def can_use_tool(self, tool_name: str, tool_input: dict[str, Any],
                           context: Any) -> Any:
        """Stash the context, then decide as QoderSession does."""
        self.contexts.append(context)
        return await super().can_use_tool(tool_name, tool_input, context)


@dataclass
class QoderHarness:
    """A session hub whose Qoder sessions talk to scripted peers through the real SDK.

    No GUI: a test answers requests through the broker, as the dialogs would.
    """

    hub: SessionHub
    broker: ApprovalBroker
    db: Database
    ledger: Ledger
    workspace: Path
    access_token: str | None = None
    peers: dict[str, ScriptedQoderPeer] = field(default_factory=dict)
    sessions: dict[str, Any] = field(default_factory=dict)
    requests: asyncio.Queue[ApprovalRequest] = field(default_factory=asyncio.Queue)
    finished: asyncio.Queue[tuple[BrokerEvent, ApprovalRequest, Decision | None]] = field(
        default_factory=asyncio.Queue)
    broker_events: list[tuple[BrokerEvent, ApprovalRequest, Decision | None]] = field(
        default_factory=list)
    hub_events: list[HubEvent] = field(default_factory=list)
    next_peer: ScriptedQoderPeer | None = None

    @classmethod
    def open(cls, root: Path, *, access_token: str | None = None,
             session_type: type[AgentSession] | None = None) -> QoderHarness:
        """A fresh database, ledger, broker and hub under `root`, with a workspace.

        `session_type` replaces `RecordingQoderSession` (e.g. a Claude session on a peer:
        it needs a `transport` attribute its SDK client uses).
        """
        workspace = root / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        db = Database.open(root / "ledger.sqlite3")
        ledger = Ledger(db)
        broker = ApprovalBroker(db, ledger)
        holder: list[QoderHarness] = []

        def factory(info: SessionInfo, options: SessionOptions, broker: ApprovalBroker,
                    sink: SessionSink) -> AgentSession:
            harness = holder[0]
            peer = harness.next_peer or ScriptedQoderPeer(cwd=options.cwd)
            harness.next_peer = None
            session: Any = (session_type or RecordingQoderSession)(info, options, broker, sink)
            session.transport = peer
            session.access_token = harness.access_token
            harness.peers[info.session_id] = peer
            harness.sessions[info.session_id] = session
            return session

        hub = SessionHub(db, ledger, broker, factory)
        harness = cls(hub, broker, db, ledger, workspace, access_token=access_token)
        holder.append(harness)

        broker.subscribe(lambda *event: harness.broker_events.append(event))
        route_broker_events(broker, harness.requests, harness.finished)
        hub.subscribe(harness.hub_events.append)
        return harness

    async def close(self) -> None:
        """Stop every session and close the database."""
        try:
            await self.hub.stop_all()
        finally:
            self.db.close()

    async def start(self, prompt: str = "Go ahead.", *,
                    peer: ScriptedQoderPeer | None = None,
                    **options: Any) -> tuple[str, ScriptedQoderPeer]:
        """Start a Qoder session on a (fresh) peer; returns its id and the peer."""
        self.next_peer = peer or ScriptedQoderPeer(cwd=str(self.workspace))
        info = await self.hub.start_session(SessionOptions(
            backend=Backend.QODER, prompt=prompt, cwd=str(self.workspace), **options))
        return info.session_id, self.peers[info.session_id]

    async def next_request(self) -> ApprovalRequest:
        """The next request that waits for a person."""
        return await asyncio.wait_for(self.requests.get(), WAIT)

    async def next_finished(self) -> tuple[BrokerEvent, ApprovalRequest, Decision | None]:
        """The next request that was answered or withdrawn."""
        return await asyncio.wait_for(self.finished.get(), WAIT)

    def transcript(self, session_id: str) -> list[TranscriptEvent]:
        """The session's transcript so far."""
        return self.hub.transcript(session_id)

    async def wait_for(self, condition: Callable[[], bool], what: str,
                       timeout: float = WAIT) -> None:
        """Poll `condition` (every few ms) until it holds; fail after `timeout`."""
        async def poll() -> None:
            while not condition():
                await asyncio.sleep(0.005)
        try:
            await asyncio.wait_for(poll(), timeout)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}") from None
