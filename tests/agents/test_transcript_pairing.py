"""Pairing tool results with their calls in a transcript (by tool_use_id)."""

from __future__ import annotations

from qoder_desktop.agents.transcript import RESULT_LABEL, ToolCallPairing
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind


def _call(tool_use_id: str, text: str) -> TranscriptEvent:
    return TranscriptEvent(session_id="s", kind=TranscriptKind.TOOL_CALL, text=text,
                           tool_name="Read", tool_use_id=tool_use_id)


def _result(tool_use_id: str, text: str) -> TranscriptEvent:
    return TranscriptEvent(session_id="s", kind=TranscriptKind.TOOL_RESULT, text=text,
                           tool_use_id=tool_use_id)


def test_a_result_right_under_its_call_reads_as_before() -> None:
    pairing = ToolCallPairing()
    pairing.pair(_call("a", "/etc/hosts"))
    shown = pairing.pair(_result("a", "127.0.0.1 localhost"))
    assert (shown.text, shown.tool_name) == ("127.0.0.1 localhost", "Read")


def test_results_of_parallel_calls_name_their_own_call() -> None:
    pairing = ToolCallPairing()
    pairing.pair(_call("a", "/etc/hosts"))
    pairing.pair(_call("b", "/etc/shells"))
    first = pairing.pair(_result("a", "127.0.0.1 localhost"))
    second = pairing.pair(_result("b", "/bin/sh"))
    assert first.text == f"{RESULT_LABEL}Read /etc/hosts\n127.0.0.1 localhost"
    assert second.text == f"{RESULT_LABEL}Read /etc/shells\n/bin/sh"


def test_a_long_call_is_named_on_one_short_line() -> None:
    pairing = ToolCallPairing()
    pairing.pair(_call("a", "x" * 500))
    pairing.pair(_call("b", "line one\nline two"))
    shown = pairing.pair(_result("a", "done"))
    label, body = shown.text.split("\n")
    assert label.endswith("…") and len(label) < 130 and body == "done"
    assert pairing.pair(_result("b", "ok")).text == f"{RESULT_LABEL}Read line one…\nok"


def test_a_result_without_a_known_call_is_left_alone() -> None:
    pairing = ToolCallPairing()
    pairing.pair(_call("a", "/etc/hosts"))
    assert pairing.pair(_result("zzz", "stray")).text == "stray"
