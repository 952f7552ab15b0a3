"""An in-app session's approval path: the way in for SDK sessions (`ApprovalSource`).

Everything the CLI asks or tells a session about tool calls passes here: the permission
callback (`can_use_tool`: the request, the broker's decision, the SDK's result), the
hooks (every call recorded for the ledger; a call matching a revoked grant sent back to
the callback) and revocation. `AgentSession` (`agents.base`) adds the life cycle and the
message stream; an adapter gives the SDK's result classes. This class owns every
attribute it uses.
"""

from __future__ import annotations

import asyncio
import logging
import os
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

from qoder_desktop.agents.ran_tools import RanTools
from qoder_desktop.agents.sdk_guard import result_problem
from qoder_desktop.agents.sink import SessionSink
from qoder_desktop.agents.transcript import STOPPED_TEXT
from qoder_desktop.agents.transcript_writer import TranscriptWriter
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.approval.source import (
    ApprovalSource,
    SessionRef,
    ToolCall,
    is_withdrawn,
    removal_update,
)
from qoder_desktop.domain.hook_events import HookEvent, ToolEventPhase
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Decision,
    DecisionKind,
    RequestKind,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
)
from qoder_desktop.domain.session_options import SessionOptions, SettingSource, TranscriptKind
from qoder_desktop.rules import matcher as rules

log = logging.getLogger(__name__)

REVOKED_ASKS_AGAIN = ("A session rule for this was revoked in Qoder Desktop; asking "
                      "again.")


def call_from_context(tool_name: str, tool_input: dict[str, Any], context: Any) -> ToolCall:
    """The call in one `can_use_tool` callback (both SDKs name the context's fields alike;
    its suggestions stay raw for the one parser, `approval.source.parse_suggestions`)."""
    return ToolCall(
        tool_name, tool_input, getattr(context, "tool_use_id", None),
        suggestions=getattr(context, "suggestions", None),
        title=getattr(context, "title", None),
        display_name=getattr(context, "display_name", None),
        description=getattr(context, "description", None),
        decision_reason=getattr(context, "decision_reason", None),
        blocked_path=getattr(context, "blocked_path", None),
        agent_id=getattr(context, "agent_id", None))


class SessionApprovals(ApprovalSource):
    """The approval path of one in-app session through one SDK."""

    RAN_FROM_STREAM: bool = False
    """Record calls that ran from the message stream, without a PostToolUse hook (one
    round trip per tool call less; see `agents.ran_tools`)."""
    SDK_ALLOW_TYPE: type = type(None)
    """The SDK's allow result class (a result of another type is refused)."""
    SDK_DENY_TYPE: type = type(None)
    """The SDK's deny result class."""
    PROJECT_SETTINGS_FILE: str = ""
    """The project file where this CLI keeps local rules, relative to the session folder."""

    def __init__(self, info: SessionInfo, options: SessionOptions, broker: ApprovalBroker,
                 sink: SessionSink) -> None:
        super().__init__(broker, sink)
        self.info = info
        self.options = options
        self._broker = broker
        self._sink = sink
        self._transcript = TranscriptWriter(info.session_id, sink)
        self._ended_by: str | None = None
        """Why the current turn is ending, if a person ended it."""
        self._revoked: list[RuleValue] = []
        self._ran = RanTools(info.session_id, sink) if self.RAN_FROM_STREAM else None

    @property
    def session_id(self) -> str:
        """Our id for this session."""
        return self.info.session_id

    # -- what the SDK adapter gives --------------------------------------------------------

    @abstractmethod
    def _sdk_allow(self, final_input: dict[str, Any], updates: list[dict[str, Any]]) -> Any:
        """The SDK's allow result."""

    @abstractmethod
    def _sdk_deny(self, message: str, interrupt: bool) -> Any:
        """The SDK's deny result (message is never empty)."""

    # -- the way in (ApprovalSource) -------------------------------------------------------

    def encode(self, decision: Decision, removals: Sequence[RuleValue]) -> Any:
        """The SDK's result for `decision`; an allow also tells the CLI to drop `removals`."""
        if decision.kind.allows:
            assert decision.final_input is not None
            # The broker already dropped what the CLI would not receive.
            updates = [update.to_wire() for update in decision.updates]
            if removals:
                updates.append(removal_update(removals))
            return self._sdk_allow(dict(decision.final_input), updates)
        return self._sdk_deny(decision.message, decision.interrupt)

    def _project_settings_file(self) -> str | None:
        """Where "save to the project" writes, if this session loads that file."""
        loads_it = SettingSource.LOCAL in self.options.setting_sources
        if not self.PROJECT_SETTINGS_FILE or not loads_it:
            return None
        return os.path.join(self.options.cwd, self.PROJECT_SETTINGS_FILE)

    def _session_ref(self) -> SessionRef:
        return SessionRef(self.session_id, self.info.name, self.info.backend,
                          cwd=self.options.cwd, add_dirs=tuple(self.options.add_dirs),
                          project_settings_file=self._project_settings_file())

    # -- the permission callback -----------------------------------------------------------

    async def can_use_tool(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        """The SDK callback: ask the broker, answer with the SDK's result; fail closed."""
        try:
            if not isinstance(tool_input, dict):
                raise TypeError(f"tool input must be an object, got {type(tool_input).__name__}")
            request = self.request_for(self._session_ref(),
                                       call_from_context(tool_name, tool_input, context))
            decision = await self.ask(request)
            if is_withdrawn(decision):
                # The CLI died or the session is stopping: like a CLI cancel, no answer.
                # (Writing to a dead CLI fails twice in the SDK's handler and leaves an
                # unretrieved task exception per request.)
                raise asyncio.CancelledError(f"request {request.request_id} was withdrawn")
            self._note_answer(request, decision)
            answer = self.answer_for(request, decision)
            result = self._checked(answer.result, request)
            if isinstance(result, self.SDK_ALLOW_TYPE):
                self.delivered(answer)
            return result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("can_use_tool failed in session %s", self.session_id)
            return self._sdk_deny(f"Qoder Desktop failed while asking: {exc}", False)

    def _note_answer(self, request: ApprovalRequest, decision: Decision) -> None:
        """What the answer means for the transcript and the calls that ran."""
        if decision.kind.allows:
            if decision.final_input:
                if self._ran is not None:
                    self._ran.allowed(request.tool_use_id, dict(decision.final_input))
                if request.kind is RequestKind.TOOL:
                    self._transcript.edited(request.tool_use_id, request.tool_name,
                                            dict(request.tool_input), dict(decision.final_input))
            return
        self._transcript.denied(request.tool_use_id, request.tool_name, decision.message,
                                keep_planning=decision.kind is DecisionKind.KEEP_PLANNING)
        if decision.interrupt:
            self._ended_by = STOPPED_TEXT

    def _checked(self, result: Any, request: ApprovalRequest) -> Any:
        """`result` if it is a well-formed result of this SDK, otherwise a deny (logged)."""
        problem = result_problem(result, self.SDK_ALLOW_TYPE, self.SDK_DENY_TYPE)
        if problem is None:
            return result
        log.error("session %s: request %s: our answer was %s; denied instead",
                  self.session_id, request.request_id, problem)
        message = ("Qoder Desktop denied this call: its answer could not be sent as given "
                   f"({problem}).")
        self._transcript.emit(TranscriptKind.DENIAL, message, is_error=True)
        return self._sdk_deny(message, False)

    # -- revocation and the hooks ----------------------------------------------------------

    def revoke(self, revoked: Iterable[SessionRule]) -> None:
        """Make revoked grants ask again, although the CLI still holds its copy.

        The PreToolUse hook sends matching calls back to `can_use_tool`; the next allow
        tells the CLI to remove the rules (`ApprovalSource.answer_for`, from the store).
        """
        for rule in revoked:
            if rule.behavior is RuleBehavior.ALLOW and rule.rule not in self._revoked:
                self._revoked.append(rule.rule)

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
                    "hookEventName": HookEvent.PRE_TOOL_USE.value, "permissionDecision": "ask",
                    "permissionDecisionReason": REVOKED_ASKS_AGAIN}}
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
