"""What the Qoder protocol tests read back: ledger rows, transcript lines, raw answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from helpers.qoder_harness import QoderHarness
from helpers.qoder_peer import ScriptedQoderPeer

from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    RuleBehavior,
)
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.rules import matcher as rules
from qoder_desktop.store.ledger import LedgerEntry


def approvals(harness: QoderHarness, session_id: str) -> list[LedgerEntry]:
    """The session's approval rows in the ledger, oldest first."""
    return [e for e in harness.ledger.entries(session_id) if e.entry_type == "approval"]


def session_lines(harness: QoderHarness, session_id: str) -> list[TranscriptEvent]:
    """The transcript from the first prompt on (the hub may add its own lines before)."""
    lines = harness.transcript(session_id)
    kinds = [e.kind for e in lines]
    return lines[kinds.index(TranscriptKind.USER_PROMPT):]


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON document, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def line_for(peer: ScriptedQoderPeer, request_id: str) -> str:
    """The raw line the SDK wrote in answer to `request_id` (exactly one)."""
    [line] = [raw for raw, msg in zip(peer.lines, peer.written, strict=True)
              if msg.get("type") == "control_response"
              and msg["response"].get("request_id") == request_id]
    return line


def as_session_grant(request: ApprovalRequest) -> Decision:
    """What "allow for this session" in the approval dialog produces."""
    split = rules.split_suggestions(request.suggestions)
    return Decision.allow_session(dict(request.tool_input), split.session_rules)


def as_session_grant_with_whole_tool_ticked(request: ApprovalRequest) -> Decision:
    """"Allow for this session" after the person also ticked the whole-tool rules
    (never pre-filled: `split_suggestions` keeps them aside)."""
    split = rules.split_suggestions(request.suggestions)
    ticked = [u for u in split.kept_aside
              if u.type == "addRules" and u.behavior is RuleBehavior.ALLOW]
    return Decision.allow_session(dict(request.tool_input), (*split.session_rules, *ticked))
