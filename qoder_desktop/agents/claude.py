"""The Claude Agent SDK adapter (`claude-agent-sdk`, which bundles the Claude Code CLI)."""

from __future__ import annotations

import os
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
)

from qoder_desktop.agents.base import AgentSession
from qoder_desktop.domain.hook_events import HookEvent
from qoder_desktop.domain.models import PermissionMode, PermissionSuggestion
from qoder_desktop.domain.session_options import SessionOptions


class ClaudeSession(AgentSession):
    """A session run by the Claude Code CLI through `ClaudeSDKClient`."""

    PROJECT_SETTINGS_FILE = os.path.join(".claude", "settings.local.json")
    SDK_ALLOW_TYPE = PermissionResultAllow
    SDK_DENY_TYPE = PermissionResultDeny
    RAN_FROM_STREAM = True  # measured against the real CLI: tests/e2e, tests/agents

    def update_problem(self, update: PermissionSuggestion) -> str | None:
        """The one check, and the SDK's own conversion: the SDK drops every update of an
        answer when one fails it."""
        problem = super().update_problem(update)
        if problem is not None:
            return problem
        try:
            PermissionUpdate.from_dict(update.to_wire()).to_dict()
        except Exception as exc:
            return f"the Claude SDK refuses it ({type(exc).__name__}: {exc})"
        return None

    def _sdk_client(self, options: SessionOptions) -> Any:
        return ClaudeSDKClient(options=self.sdk_options(options))

    def sdk_options(self, options: SessionOptions) -> ClaudeAgentOptions:
        """The SDK options for `options`. Never log or print them: their repr has secrets."""
        mode = options.permission_mode
        if mode is PermissionMode.YOLO:
            mode = PermissionMode.BYPASS
        # A PreToolUse hook that fails must block the call, never let it through.
        hooks = {event: [HookMatcher(
                     matcher=None, hooks=[callback],
                     on_failure="block" if event == HookEvent.PRE_TOOL_USE else None)]
                 for event, callback in self.hook_callbacks().items()}
        return ClaudeAgentOptions(permission_mode=mode.value, hooks=hooks,  # type: ignore[arg-type]
                                  **self.common_sdk_options(options))

    def _sdk_allow(self, final_input: dict[str, Any], updates: list[dict[str, Any]]) -> Any:
        return PermissionResultAllow(
            updated_input=final_input,
            updated_permissions=[PermissionUpdate.from_dict(update) for update in updates] or None,
        )

    def _sdk_deny(self, message: str, interrupt: bool) -> Any:
        return PermissionResultDeny(message=message, interrupt=interrupt)
