"""The adapters' guards on the permission path, through both SDKs' real control protocol.

Each SDK's client and `Query` run unchanged against the scripted CLI peer
(`tests/helpers/qoder_peer.py`; the Claude SDK speaks the same control protocol):

- our own result step checks what it hands the SDK: anything but a well-formed allow
  or deny of that SDK goes out as a deny the agent can read, and is logged;
- a cancel for a control request id the CLI reused withdraws every request with it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest
import pytest_asyncio
import qoder_agent_sdk
from claude_agent_sdk import ClaudeSDKClient
from helpers.qoder_harness import QoderHarness
from helpers.qoder_peer import ScriptedQoderPeer

from qoder_desktop.agents.claude import ClaudeSession
from qoder_desktop.agents.sdk_guard import EveryRequestById
from qoder_desktop.approval.broker import BrokerEvent
from qoder_desktop.domain.models import DecidedBy, Decision, DecisionKind
from qoder_desktop.domain.session_options import TranscriptKind

pytestmark = pytest.mark.asyncio


class PeerClaudeSession(ClaudeSession):
    """A Claude session whose SDK client talks to the scripted peer instead of the CLI."""

    transport: Any = None
    access_token: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.contexts: list[Any] = []

    def _sdk_client(self, options: Any) -> Any:
        return ClaudeSDKClient(options=self.sdk_options(options), transport=self.transport)


class ClaudePeer(ScriptedQoderPeer):
    """The peer as the Claude Code CLI answers `initialize` (it honours on_failure)."""

    def initialize_response(self) -> dict[str, Any]:
        """qodercli's answer plus Claude Code's hook capability."""
        return {**super().initialize_response(), "hook_on_failure_supported": True}


async def start(harness: QoderHarness) -> tuple[str, ScriptedQoderPeer]:
    """Start a session on the peer its SDK expects."""
    claude = harness.sessions_type is PeerClaudeSession  # type: ignore[attr-defined]
    peer = (ClaudePeer if claude else ScriptedQoderPeer)(cwd=str(harness.workspace))
    return await harness.start(peer=peer)


@pytest_asyncio.fixture(params=["qoder", "claude"])
async def harness(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QoderHarness]:
    """A hub whose sessions run through the Qoder SDK or the Claude SDK, on scripted peers."""
    session_type = PeerClaudeSession if request.param == "claude" else None
    harness = QoderHarness.open(tmp_path, session_type=session_type)
    harness.sessions_type = session_type  # type: ignore[attr-defined]
    try:
        yield harness
    finally:
        await harness.close()


def sdk_of(harness: QoderHarness, session_id: str) -> Any:
    """The SDK module the session's adapter uses."""
    session = harness.sessions[session_id]
    return claude_agent_sdk if isinstance(session, ClaudeSession) else qoder_agent_sdk


# -- item 9: our result step is checked ----------------------------------------------

MALFORMED = {
    "a plain dict": lambda sdk: {"behavior": "allow", "updatedInput": {"command": "ls"}},
    "None": lambda sdk: None,
    "an allow with a string input": lambda sdk: sdk.PermissionResultAllow(
        updated_input="rm -rf ~"),
    "an allow without an input": lambda sdk: sdk.PermissionResultAllow(updated_input=None),
    "an allow whose updates are not a list": lambda sdk: sdk.PermissionResultAllow(
        updated_input={"command": "ls"}, updated_permissions="everything"),
    "an allow whose behavior says deny": lambda sdk: sdk.PermissionResultAllow(
        behavior="deny", updated_input={"command": "ls"}),
    "a deny with an empty message": lambda sdk: sdk.PermissionResultDeny(message=""),
    "a deny whose interrupt is not a boolean": lambda sdk: sdk.PermissionResultDeny(
        message="no", interrupt="yes"),
    "the other SDK's allow": lambda sdk: (
        qoder_agent_sdk if sdk is claude_agent_sdk else claude_agent_sdk
    ).PermissionResultAllow(updated_input={"command": "ls"}),
}


@pytest.mark.parametrize("what", sorted(MALFORMED))
async def test_a_malformed_result_of_our_own_goes_out_as_a_readable_deny(
        harness: QoderHarness, what: str, caplog: pytest.LogCaptureFixture) -> None:
    session_id, peer = await start(harness)
    session = harness.sessions[session_id]
    bad = MALFORMED[what](sdk_of(harness, session_id))
    session.encode = lambda *_args: bad  # the fault: our own result step misbehaves

    asked = peer.ask("Bash", {"command": "ls"})
    request = await harness.next_request()
    with caplog.at_level(logging.ERROR, logger="qoder_desktop.agents.base"):
        harness.broker.answer(request.request_id, Decision.allow_once({"command": "ls"}))
        answer = await peer.answer(asked.request_id)

    assert answer["behavior"] == "deny"
    assert "could not be sent as given" in answer["message"]
    assert "interrupt" not in answer or answer["interrupt"] is False
    assert "updatedInput" not in answer
    assert any("denied instead" in r.getMessage() and request.request_id in r.getMessage()
               for r in caplog.records)
    denials = [e for e in harness.transcript(session_id) if e.kind is TranscriptKind.DENIAL]
    assert denials and "could not be sent as given" in denials[-1].text


async def test_well_formed_results_pass_unchanged(harness: QoderHarness) -> None:
    _, peer = await start(harness)
    asked = peer.ask("Bash", {"command": "make"})
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.allow_once({"command": "make -j2"}))
    answer = await peer.answer(asked.request_id)
    assert (answer["behavior"], answer["updatedInput"]) == ("allow", {"command": "make -j2"})

    asked = peer.ask("Bash", {"command": "rm -rf build"})
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.deny("Not now.", interrupt=True))
    answer = await peer.answer(asked.request_id)
    assert (answer["behavior"], answer["message"], answer["interrupt"]) == (
        "deny", "Not now.", True)


# -- item 10: a cancel for a reused request id closes every request with it -----------


async def test_a_cancel_for_a_reused_id_withdraws_both_requests(harness: QoderHarness) -> None:
    session_id, peer = await start(harness)
    first = peer.ask("Bash", {"command": "make first"}, request_id="cli-req-same")
    await harness.next_request()
    second = peer.ask("Bash", {"command": "make second"}, request_id="cli-req-same")
    await harness.next_request()
    assert first.request_id == second.request_id
    assert len(harness.broker.pending()) == 2

    peer.cancel("cli-req-same")
    withdrawn = {(await harness.next_finished())[1].tool_input["command"] for _ in range(2)}
    assert withdrawn == {"make first", "make second"}
    assert harness.broker.pending() == []
    await peer.barrier()
    assert peer.responses_for("cli-req-same") == []
    rows = [e for e in harness.ledger.entries(session_id) if e.entry_type == "approval"]
    assert [(r.outcome, r.decided_by) for r in rows] == [
        (DecisionKind.WITHDRAWN, DecidedBy.WITHDRAWN)] * 2

    # The session goes on: the next request (under the same id again) is answered.
    again = peer.ask("Bash", {"command": "make again"}, request_id="cli-req-same")
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.allow_once(dict(request.tool_input)))
    assert (await peer.answer(again.request_id))["behavior"] == "allow"


async def test_answering_the_first_of_a_reused_id_leaves_the_second_cancellable(
        harness: QoderHarness) -> None:
    _, peer = await start(harness)
    peer.ask("Bash", {"command": "make first"}, request_id="cli-req-twice")
    first = await harness.next_request()
    peer.ask("Bash", {"command": "make second"}, request_id="cli-req-twice")
    second = await harness.next_request()

    harness.broker.answer(first.request_id, Decision.allow_once(dict(first.tool_input)))
    event, finished, _ = await harness.next_finished()
    assert (event, finished.request_id) == (BrokerEvent.ANSWERED, first.request_id)
    await peer.response("cli-req-twice")
    peer.cancel("cli-req-twice")
    event, finished, _ = await harness.next_finished()
    assert (event, finished.request_id) == (BrokerEvent.WITHDRAWN, second.request_id)
    assert harness.broker.pending() == []


async def test_both_sdks_still_have_the_table_the_guard_replaces(harness: QoderHarness) -> None:
    """If an SDK upgrade renames its in-flight table, this fails instead of the guard
    silently doing nothing."""
    session_id, _ = await start(harness)
    client = harness.sessions[session_id]._client
    assert isinstance(client._query._inflight_requests, EveryRequestById)
