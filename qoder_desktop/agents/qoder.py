"""The Qoder Agent SDK adapter (`qoder-agent-sdk`, which bundles `qodercli`)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from qoder_agent_sdk import (
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    QoderAgentOptions,
    QoderSDKClient,
)
from qoder_agent_sdk.auth import AccessTokenAuthOptions, QoderCLIAuthOptions

from qoder_desktop.agents.base import AgentSession
from qoder_desktop.config.secrets import APP_ONLY_ENV
from qoder_desktop.domain.models import PermissionMode
from qoder_desktop.domain.session_options import SessionOptions, TranscriptEvent, TranscriptKind

log = logging.getLogger(__name__)


class QoderSession(AgentSession):
    """A session run by `qodercli` through `QoderSDKClient`.

    `access_token` is the Qoder personal access token; without one the local qodercli
    login is reused.
    """

    PROJECT_SETTINGS_FILE = os.path.join(".qoder", "settings.local.json")
    SDK_ALLOW_TYPE = PermissionResultAllow
    SDK_DENY_TYPE = PermissionResultDeny
    access_token: str | None = None
    transport: Any = None
    """A custom SDK `Transport` (tests use a scripted peer); None runs the real CLI."""

    def _sdk_client(self, options: SessionOptions) -> Any:
        return QoderSDKClient(options=self.sdk_options(options), transport=self.transport)

    def sdk_options(self, options: SessionOptions) -> QoderAgentOptions:
        """The SDK options for `options`. Never log or print them: their repr has secrets."""
        mode = options.permission_mode
        dangerous = mode.is_dangerous and self.risks_confirmed
        hooks = {event: [HookMatcher(matcher=None, hooks=[callback])]
                 for event, callback in self.hook_callbacks().items()}
        auth: Any = (AccessTokenAuthOptions(access_token=self.access_token)
                     if self.access_token else QoderCLIAuthOptions())
        return QoderAgentOptions(
            permission_mode=(mode.value if mode is not PermissionMode.DEFAULT else None),  # type: ignore[arg-type]
            allow_dangerously_skip_permissions=dangerous,
            hooks=hooks,  # type: ignore[arg-type]
            auth=auth,
            **self.common_sdk_options(options),
        )

    def _withheld_env(self) -> dict[str, Any]:
        # The Qoder SDK drops a variable whose value is None from the CLI's environment.
        return {name: None for name in APP_ONLY_ENV}

    def _after_connect(self) -> None:
        # qodercli deletes the access-token file once it has read it (at the handshake);
        # should a CLI not, it goes now rather than when the session closes.
        path = getattr(getattr(self._client, "_transport", None), "_auth_payload_path", None)
        if isinstance(path, Path) and path.name == "payload.json":
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("could not remove the Qoder access-token file: %s", exc)

    def _sdk_allow(self, final_input: dict[str, Any], updates: list[dict[str, Any]]) -> Any:
        # Raw dicts pass through the Qoder SDK unchecked; ours omit a null ruleContent.
        return PermissionResultAllow(updated_input=final_input,
                                     updated_permissions=list(updates) or None)

    def _sdk_deny(self, message: str, interrupt: bool) -> Any:
        # The Qoder SDK turns an empty deny message into an error response, and a blank
        # one tells the agent nothing.
        return PermissionResultDeny(message=message if message.strip() else
                                    "Denied by Qoder Desktop.", interrupt=interrupt)

    def _sdk_extra_transcript(self, message: Any) -> TranscriptEvent | None:
        if type(message).__name__ != "SDKPermissionDeniedMessage":
            return None
        return TranscriptEvent(
            session_id=self.session_id, kind=TranscriptKind.DENIAL,
            text=f"{message.tool_name} denied: {message.message}",
            tool_name=message.tool_name, tool_use_id=message.tool_use_id, is_error=True)
