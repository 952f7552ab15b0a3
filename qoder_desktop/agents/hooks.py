"""The hook callbacks every adapter registers: PreToolUse, PostToolUse, PostToolUseFailure."""

from __future__ import annotations

from typing import Any

from qoder_desktop.domain.hook_events import HookEvent, ToolEventPhase
from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.rules import matcher as rules


class HookCallbacks:
    """Records every tool call the CLI reports and asks again for revoked grants.

    Mixed into `AgentSession`, which provides the attributes declared here.
    """

    options: SessionOptions
    _sink: Any
    _revoked: list[RuleValue]

    @property
    def session_id(self) -> str:
        """Our id for this session."""
        raise NotImplementedError

    RAN_FROM_STREAM: bool = False
    """Record calls that ran from the message stream, without a PostToolUse hook (one
    round trip per tool call less; see `agents.ran_tools`)."""

    def hook_callbacks(self) -> dict[str, Any]:
        """Our hook callback for each hook event; adapters wrap them in their HookMatcher."""
        hooks: dict[str, Any] = {HookEvent.PRE_TOOL_USE: self.pre_tool_use,
                                 HookEvent.POST_TOOL_USE: self.post_tool_use,
                                 HookEvent.POST_TOOL_USE_FAILURE: self.permission_denied}
        if self.RAN_FROM_STREAM:
            del hooks[HookEvent.POST_TOOL_USE]
        return hooks

    async def pre_tool_use(self, hook_input: Any, tool_use_id: str | None,
                           context: Any) -> dict[str, Any]:
        """Record every tool call; send calls matching a revoked grant back to the callback."""
        tool_name = str(hook_input.get("tool_name", ""))
        tool_input = hook_input.get("tool_input") or {}
        self._sink.tool_seen(self.session_id, tool_use_id, tool_name, tool_input,
                             ToolEventPhase.PRE_TOOL_USE)
        if self._revoked:
            as_deny = [SessionRule(session_id=self.session_id, behavior=RuleBehavior.DENY,
                                   rule=value) for value in self._revoked]
            if rules.evaluate(as_deny, tool_name, tool_input, self.options.cwd) is not None:
                return {"hookSpecificOutput": {
                    "hookEventName": HookEvent.PRE_TOOL_USE, "permissionDecision": "ask",
                    "permissionDecisionReason": "A session rule for this was revoked in "
                                                "Qoder Desktop; asking again."}}
        return {}

    async def post_tool_use(self, hook_input: Any, tool_use_id: str | None,
                            context: Any) -> dict[str, Any]:
        """Record that a tool call ran."""
        self._sink.tool_seen(self.session_id, tool_use_id, str(hook_input.get("tool_name", "")),
                             hook_input.get("tool_input") or {}, ToolEventPhase.POST_TOOL_USE)
        return {}

    async def permission_denied(self, hook_input: Any, tool_use_id: str | None,
                                context: Any) -> dict[str, Any]:
        """Record a tool call that failed (PostToolUseFailure) or that the CLI denied."""
        phase = (ToolEventPhase.POST_TOOL_USE_FAILURE
                 if hook_input.get("hook_event_name") == HookEvent.POST_TOOL_USE_FAILURE
                 else ToolEventPhase.PERMISSION_DENIED)
        self._sink.tool_seen(self.session_id, tool_use_id, str(hook_input.get("tool_name", "")),
                             hook_input.get("tool_input") or {}, phase)
        return {}
