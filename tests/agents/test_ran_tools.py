"""Calls that ran, from the message stream (one CLI hook round trip per call less).

The real-CLI side is in tests/e2e/test_claude_sessions.py (allowed, denied and edited
calls); here the pairing rules with the SDK's own block classes.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import ToolResultBlock, ToolUseBlock

from qoder_desktop.agents.ran_tools import RanTools


class Sink:
    def __init__(self) -> None:
        self.rows: list[tuple[str | None, str, dict[str, Any], str]] = []

    def tool_seen(self, session_id: str, tool_use_id: str | None, tool_name: str,
                  tool_input: dict[str, Any], phase: str) -> None:
        assert session_id == "s1"
        self.rows.append((tool_use_id, tool_name, tool_input, phase))


def test_a_call_that_ran_is_recorded_once_with_the_input_that_ran() -> None:
    sink = Sink()
    ran = RanTools("s1", sink)
    ran.called(ToolUseBlock(id="t1", name="Bash", input={"command": "rm -rf build"}))
    ran.called(ToolUseBlock(id="t2", name="Read", input={"file_path": "/a"}))
    ran.allowed("t1", {"command": "rm -rf build/tmp"})  # the person edited it
    ran.result(ToolResultBlock(tool_use_id="t2", content="a", is_error=False))
    ran.result(ToolResultBlock(tool_use_id="t1", content="", is_error=False))
    ran.result(ToolResultBlock(tool_use_id="t1", content="", is_error=False))  # a repeat
    assert sink.rows == [("t2", "Read", {"file_path": "/a"}, "PostToolUse"),
                         ("t1", "Bash", {"command": "rm -rf build/tmp"}, "PostToolUse")]


def test_an_error_result_is_not_taken_as_a_call_that_ran() -> None:
    """A denied call's result is an error too; failures come from their own hook."""
    sink = Sink()
    ran = RanTools("s1", sink)
    ran.called(ToolUseBlock(id="t1", name="Bash", input={"command": "make"}))
    ran.result(ToolResultBlock(tool_use_id="t1", content="Permission denied", is_error=True))
    ran.result(ToolResultBlock(tool_use_id="unknown", content="x", is_error=False))
    assert sink.rows == []


def test_claude_sessions_register_no_post_tool_use_hook_but_keep_the_others(
        tmp_path: Any) -> None:
    from qoder_desktop.agents.claude import ClaudeSession
    from qoder_desktop.agents.qoder import QoderSession
    from qoder_desktop.domain.models import Backend, SessionInfo
    from qoder_desktop.domain.session_options import SessionOptions

    info = SessionInfo(name="x", backend=Backend.CLAUDE, cwd=str(tmp_path))
    claude = ClaudeSession(info, SessionOptions(cwd=str(tmp_path)), None, Sink())  # type: ignore[arg-type]
    assert sorted(claude.hook_callbacks()) == ["PostToolUseFailure", "PreToolUse"]
    options = claude.sdk_options(SessionOptions(cwd=str(tmp_path)))
    assert options.hooks is not None and "PreToolUse" in options.hooks  # revocation
    qoder = QoderSession(info, SessionOptions(cwd=str(tmp_path)), None, Sink())  # type: ignore[arg-type]
    assert sorted(qoder.hook_callbacks()) == ["PostToolUse", "PostToolUseFailure", "PreToolUse"]
