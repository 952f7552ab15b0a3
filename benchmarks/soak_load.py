"""The soak's load inside the app: SDK sessions on scripted peers, the real-CLI sample, and
the person who answers every request through its dialog.

- **SDK sessions**: the real `ClaudeSession` / `QoderSession` adapters and their SDKs'
  real control-protocol code (`ClaudeSDKClient`, `QoderSDKClient`, `Query`), started and
  stopped through the app (`DesktopApp.start_session`, the window's `stop_requested`),
  with a scripted CLI on the SDK's `Transport` interface in the place of the subprocess
  (`tests/helpers/qoder_peer.py`: the JSON lines the CLI sends). A real CLI per request
  would take ~2 s each; the sample below runs the real one.
- **The real Claude Code CLI** (bundled with claude-agent-sdk) against the scripted model
  in its own process (``bash`` scenario: one Bash call the CLI asks about), started through
  the app like a person's session.
- **The person**: each dialog the queue opens is answered with a real click on its
  Allow once (or, one in five, Deny) button once the dialog has painted and armed.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import uuid
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, now
from benchmarks.soak_measure import samples

sys.path.insert(0, str(REPO_ROOT / "tests"))  # the scripted CLI peer of the tests

PEER_PREFIX = "soak-peer"
WAIT = 120.0
"""Seconds before a stuck step fails the run instead of hanging it."""


def peer_session_types() -> tuple[type, type, type]:
    """(Claude session on a peer, Qoder session on a peer, the Claude peer class)."""
    from claude_agent_sdk import ClaudeSDKClient
    from helpers.qoder_peer import ScriptedQoderPeer

    from qoder_desktop.agents.claude import ClaudeSession
    from qoder_desktop.agents.qoder import QoderSession

    class PeerClaudeSession(ClaudeSession):
        """A Claude session whose SDK client talks to a scripted peer, not the CLI."""

        transport: Any = None

        def _sdk_client(self, options: Any) -> Any:
            return ClaudeSDKClient(options=self.sdk_options(options), transport=self.transport)

    class ClaudePeer(ScriptedQoderPeer):
        """The peer as Claude Code answers `initialize` (it honours on_failure)."""

        def initialize_response(self) -> dict[str, Any]:
            return {**super().initialize_response(), "hook_on_failure_supported": True}

    return PeerClaudeSession, QoderSession, ClaudePeer


class Person:
    """Answers every dialog the queue opens, as a person would: after it has painted and
    armed, a mouse click on Allow once (one in five: Deny).

    `open_ms` collects, per answered dialog, the time from when its dialog was due (its
    request arrived, or the dialog before it was answered or its request withdrawn,
    whichever came later) to the loop turn after its first paint
    (`BaseDecisionDialog.when_painted`).
    """

    def __init__(self, desktop: Any) -> None:
        from qoder_desktop.approval.broker import BrokerEvent

        self.desktop = desktop
        self.open_ms = samples()
        self.answered = 0
        self.denied = 0
        self._added: dict[str, float] = {}
        self._last_finished = 0.0
        self._dialogs: asyncio.Queue[Any] = asyncio.Queue()
        self._count = itertools.count()
        self._task: asyncio.Task[None] | None = None

        def on_broker(event: Any, request: Any, _decision: Any) -> None:
            if event is BrokerEvent.ADDED:
                self._added[request.request_id] = now()
            elif event is BrokerEvent.ANSWERED:
                self._added.pop(request.request_id, None)
            elif event is BrokerEvent.WITHDRAWN:
                self._added.pop(request.request_id, None)
                self._last_finished = now()

        self._unsubscribe = desktop.broker.subscribe(on_broker)
        desktop.app.dialogs.dialog_opened.connect(self._opened)

    def _decided(self) -> None:
        """A dialog was answered: the next request's dialog is due from now."""
        self._last_finished = now()

    def _opened(self, dialog: Any) -> None:
        """A dialog is shown: note when it was due, hand it to the answering task."""
        due = max(self._added.get(dialog.request.request_id, now()), self._last_finished)
        # A lambda, not the bound method: PySide6 (6.11) keeps a weak reference for every
        # bound method of a plain Python object connected to a signal, after the dialog
        # is gone and even after a disconnect; one per dialog, measured as the app's.
        dialog.decided.connect(lambda _decision: self._decided())
        self._dialogs.put_nowait((dialog, due))

    def start(self) -> None:
        """Start answering."""
        self._task = asyncio.ensure_future(self._answer_all())

    async def stop(self) -> None:
        """Stop answering (the harness's own task ends)."""
        self.desktop.app.dialogs.dialog_opened.disconnect(self._opened)
        self._unsubscribe()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The answering task (the harness's own; not counted as the app's)."""
        return self._task

    async def _answer_all(self) -> None:
        while True:
            dialog, due = await self._dialogs.get()
            try:
                await self._answer(dialog, due)
            except RuntimeError:  # its C++ object is gone: it was withdrawn and deleted
                continue

    async def _answer(self, dialog: Any, due: float) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        request_id = dialog.request.request_id
        painted: list[float] = []
        dialog.when_painted(lambda: painted.append(now()))
        deny = next(self._count) % 5 == 4
        while True:
            if not self.desktop.broker.is_pending(request_id):
                return  # withdrawn meanwhile
            button = dialog.ui.denyButton if deny else dialog.ui.allowOnceButton
            if painted and button.isEnabled():
                break
            await asyncio.sleep(0.001)
        self.open_ms.append((painted[0] - due) * 1e3)
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
        self.answered += 1
        self.denied += deny


class SdkSessions:
    """SDK sessions on scripted peers, started and stopped through the app."""

    def __init__(self, workspace: Path) -> None:
        self.desktop: Any = None
        """The app (set once it is built with `factory`)."""
        self.workspace = workspace
        self.peers: dict[str, Any] = {}
        """Peers waiting for their session to be built, by session name."""
        self.sessions = 0
        self.outcomes: dict[str, int] = {}

    def factory(self, launcher: Any) -> Any:
        """The hub's session factory: peer sessions by name, the real CLI otherwise."""
        claude_type, qoder_type, _ = peer_session_types()

        def build(info: Any, options: Any, broker: Any, sink: Any) -> Any:
            from qoder_desktop.domain.models import Backend

            peer = self.peers.pop(options.name or "", None)
            if peer is None:
                return launcher(info, options, broker, sink)
            kind = claude_type if options.backend is Backend.CLAUDE else qoder_type
            session = kind(info, options, broker, sink)
            session.transport = peer
            return session

        return build

    async def lane(self, backend: Any, calls: int, per_session: int) -> None:
        """`calls` tool calls in sessions of `per_session` calls, one session at a time."""
        from helpers.qoder_peer import ScriptedQoderPeer

        from qoder_desktop.domain.models import Backend
        from qoder_desktop.domain.session_options import SessionOptions

        _, _, claude_peer = peer_session_types()
        done = 0
        while done < calls:
            name = f"{PEER_PREFIX}-{uuid.uuid4().hex[:8]}"
            peer = (claude_peer if backend is Backend.CLAUDE else ScriptedQoderPeer)(
                cwd=str(self.workspace))
            self.peers[name] = peer
            task = self.desktop.app.start_session(SessionOptions(
                backend=backend, prompt="Go ahead.", cwd=str(self.workspace), name=name))
            info = await asyncio.wait_for(task, WAIT)
            self.sessions += 1
            peer.system_init()
            for _ in range(min(per_session, calls - done)):
                await self._one_call(peer, done)
                done += 1
            peer.result("Done.")
            await self._stop(info.session_id)
            for record in (peer.lines, peer.written, peer.sdk_requests, peer.user_messages):
                record.clear()  # the peer's own log is the harness's, not the app's
            peer._responses.clear()

    async def _one_call(self, peer: Any, index: int) -> None:
        tool_use_id = f"toolu_{uuid.uuid4().hex[:16]}"
        tool_input = {"command": f"touch s{index}.txt", "description": "Create a file"}
        peer.tool_use(tool_use_id, "Bash", tool_input)
        suggestion = [{"type": "addRules", "rules": [{"toolName": "Bash",
                                                      "ruleContent": tool_input["command"]}],
                       "behavior": "allow", "destination": "localSettings"}]
        asked = peer.ask("Bash", tool_input, tool_use_id=tool_use_id, suggestions=suggestion)
        answer = await peer.answer(asked.request_id, WAIT)
        behavior = str(answer.get("behavior"))
        self.outcomes[behavior] = self.outcomes.get(behavior, 0) + 1
        peer.tool_result(tool_use_id, "" if behavior == "allow" else answer.get("message", ""),
                         is_error=behavior != "allow")

    async def _stop(self, session_id: str) -> None:
        """Stop through the window's Stop (the app's own path), and wait until stopped."""
        from qoder_desktop.domain.models import SessionState

        self.desktop.app.window.stop_requested.emit(session_id)
        await _until(lambda: self.desktop.hub.session(session_id).state is SessionState.STOPPED)


async def real_cli_session(desktop: Any, workspace: Path) -> int:
    """One session of the real Claude Code CLI on the scripted model's ``bash`` scenario,
    started through the app, its request answered by the person, then stopped; returns
    the number of requests it raised."""
    from qoder_desktop.agents.hub import HubEvent
    from qoder_desktop.domain.models import SessionState
    from qoder_desktop.domain.session_options import SessionOptions, TranscriptKind

    name = f"soak real CLI {uuid.uuid4().hex[:6]}"
    ended = asyncio.Event()
    asked = [0]

    def ours(session_id: str) -> bool:
        return any(s.session_id == session_id and s.name == name for s in desktop.hub.sessions())

    def on_hub(event: HubEvent) -> None:
        line = event.line
        if line is not None and line.kind in (TranscriptKind.RESULT, TranscriptKind.ERROR) \
                and ours(event.session_id):
            ended.set()

    def on_broker(event: Any, request: Any, _decision: Any) -> None:
        if event.name == "ADDED" and request.session_name == name:
            asked[0] += 1

    unsubscribe_hub = desktop.hub.subscribe(on_hub)
    unsubscribe_broker = desktop.broker.subscribe(on_broker)
    try:
        task = desktop.app.start_session(SessionOptions(
            cwd=str(workspace), scenario="bash", name=name, prompt="Write hello.txt please."))
        info = await asyncio.wait_for(task, WAIT)
        await asyncio.wait_for(ended.wait(), WAIT)
        desktop.app.window.stop_requested.emit(info.session_id)
        await _until(lambda: desktop.hub.session(info.session_id).state is SessionState.STOPPED)
    finally:
        unsubscribe_hub()
        unsubscribe_broker()
    return asked[0]


async def _until(condition: Any, timeout: float = WAIT) -> None:
    """Wait (polling every 5 ms) until `condition()` holds; fail after `timeout`."""
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.005)
    await asyncio.wait_for(poll(), timeout)
