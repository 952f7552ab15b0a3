"""The Claude Agent SDK adapter (`claude-agent-sdk`, which bundles the Claude Code CLI)."""

from __future__ import annotations

import json
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
)

from qoder_desktop.backends.base import AgentSession
from qoder_desktop.models import PermissionMode
from qoder_desktop.session_options import SessionOptions


class ClaudeSession(AgentSession):
    """A session run by the Claude Code CLI through `ClaudeSDKClient`."""

    def _sdk_client(self, options: SessionOptions) -> Any:
        return ClaudeSDKClient(options=self.sdk_options(options))

    def sdk_options(self, options: SessionOptions) -> ClaudeAgentOptions:
        """The SDK options for `options`. Never log or print them: their repr has secrets."""
        mode = options.permission_mode
        if mode is PermissionMode.YOLO:
            mode = PermissionMode.BYPASS
        hooks: dict[Any, list[HookMatcher]] = {
            "PreToolUse": [HookMatcher(matcher=None, hooks=[self.pre_tool_use],  # type: ignore[list-item]
                                       on_failure="block")],
            "PostToolUse": [HookMatcher(matcher=None, hooks=[self.post_tool_use])],  # type: ignore[list-item]
            "PostToolUseFailure": [HookMatcher(matcher=None, hooks=[self.permission_denied])],  # type: ignore[list-item]
        }
        return ClaudeAgentOptions(
            cwd=options.cwd,
            add_dirs=list(options.add_dirs),
            tools=options.tools,
            allowed_tools=list(options.allowed_tools),
            disallowed_tools=list(options.disallowed_tools),
            permission_mode=mode.value,  # type: ignore[arg-type]
            model=options.model,
            settings=(json.dumps({"permissions": options.settings_permissions})
                      if options.settings_permissions else None),
            setting_sources=[source.value for source in options.setting_sources],  # type: ignore[misc]
            mcp_servers=dict(options.mcp_servers),
            env=dict(self._env),
            stderr=self._on_stderr,
            can_use_tool=self.can_use_tool,
            hooks=hooks,
        )

    def _sdk_allow(self, final_input: dict[str, Any], updates: list[dict[str, Any]]) -> Any:
        return PermissionResultAllow(
            updated_input=final_input,
            updated_permissions=[PermissionUpdate.from_dict(update) for update in updates] or None,
        )

    def _sdk_deny(self, message: str, interrupt: bool) -> Any:
        return PermissionResultDeny(message=message, interrupt=interrupt)
