"""Choosing how a session runs: which backend, which credentials, which environment.

`SessionLauncher` is the hub's session factory. With a `DemoModel` it points every
Claude session at the scripted model on loopback with a throw-away CLI config folder;
otherwise it passes the user's credentials (keyring first, then the environment). The
keyring is read off the event loop, when the session starts (`AgentSession.prepare`):
a slow keyring shows as "waiting for the keyring" in the transcript, and one that does
not answer in time keeps the session from starting, saying why. The SDK adapters are
imported only for the backend a session uses.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from qoder_desktop.agents.base import AgentSession
from qoder_desktop.agents.private_files import AUTH_DIR_PREFIX as AUTH_DIR_PREFIX
from qoder_desktop.agents.private_files import STALE_AGE_S, sweep_private_dirs
from qoder_desktop.agents.sink import SessionSink, SessionStartError
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.keyring_calls import KeyringTimeout, keyring_call
from qoder_desktop.config.secrets import SecretName, SecretStore, SecretStoreError
from qoder_desktop.domain.models import Backend, SessionInfo
from qoder_desktop.domain.session_options import (
    DEMO_SCENARIO as DEMO_SCENARIO,
)
from qoder_desktop.domain.session_options import (
    SessionOptions,
    TranscriptEvent,
    TranscriptKind,
)

log = logging.getLogger(__name__)



@dataclass
class DemoModel:
    """The scripted model and a scratch folder for `--demo` (and tests).

    Attributes:
        base_url: the scripted model's loopback URL.
        root: a temporary folder holding the workspace and the CLI's config folder.
    """

    base_url: str
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="qoder-desktop-demo-")))

    @property
    def workspace(self) -> Path:
        """The scratch workspace the demo agent works in."""
        folder = self.root / "workspace"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    @property
    def config_dir(self) -> Path:
        """The CLI's own config folder: never the user's ~/.claude."""
        return self.root / "claude-config"

    def cleanup(self) -> None:
        """Remove the scratch folder."""
        shutil.rmtree(self.root, ignore_errors=True)


class SessionLauncher:
    """Builds the backend adapter for a new session (the hub's `SessionFactory`).

    Args:
        secrets: where credentials come from.
        anthropic_base_url: the user's Anthropic endpoint (settings), if any.
        demo: the scripted model every Claude session talks to instead (`--demo`).
        keyring_timeout: seconds to wait for the keyring before the session fails
            (`config.keyring_calls.KEYRING_TIMEOUT_S` when None).
    """

    def __init__(self, secrets: SecretStore, *, anthropic_base_url: str | None = None,
                 demo: DemoModel | None = None, keyring_timeout: float | None = None) -> None:
        self._secrets = secrets
        self._anthropic_base_url = anthropic_base_url
        self._demo = demo
        self._keyring_timeout = keyring_timeout

    async def _secret(self, name: SecretName,
                      on_slow: Callable[[str], None] | None = None) -> str | None:
        """Read a credential off the loop; a slow keyring is shown, a silent one fails.

        Args:
            name: the credential.
            on_slow: called with a sentence when the keyring keeps the app waiting.

        Raises:
            SessionStartError: the keyring did not answer in time.
        """
        waiting = None if on_slow is None else (
            lambda: on_slow(f"Waiting for the keyring to give the {name.label}…"))
        try:
            value = await keyring_call(lambda: self._secrets.get(name), f"read the {name.label}",
                                       timeout=self._keyring_timeout, on_slow=waiting)
        except KeyringTimeout as exc:
            raise SessionStartError(f"{exc} The session was not started.") from None
        except SecretStoreError as exc:
            log.warning("could not read %s: %s", name.label, exc)
            return None
        return value.reveal() if value is not None else None

    async def claude_env(self, options: SessionOptions,
                         on_slow: Callable[[str], None] | None = None) -> dict[str, str]:
        """The environment for a Claude Code CLI session (the API key read off the loop).

        Raises:
            SessionStartError: the keyring did not answer in time.
        """
        if self._demo is not None:
            from qoder_desktop.scripted_model.cli_env import build_cli_env

            return build_cli_env(self._demo.base_url, self._demo.config_dir,
                                 scenario=options.scenario or DEMO_SCENARIO)
        env: dict[str, str] = {}
        key = await self._secret(SecretName.ANTHROPIC_API_KEY, on_slow)
        if key:
            env["ANTHROPIC_API_KEY"] = key
        if self._anthropic_base_url:
            env["ANTHROPIC_BASE_URL"] = self._anthropic_base_url
        return env

    def __call__(self, info: SessionInfo, options: SessionOptions, broker: ApprovalBroker,
                 sink: SessionSink) -> AgentSession:
        """Build the adapter for `options.backend`; its credentials load when it starts."""
        def note(text: str) -> None:
            sink.add_transcript_line(TranscriptEvent(
                session_id=info.session_id, kind=TranscriptKind.SYSTEM, text=text))

        if options.backend is Backend.QODER:
            from qoder_desktop.agents.qoder import QoderSession

            qoder = QoderSession(info, options, broker, sink)

            async def token() -> None:
                qoder.access_token = await self._secret(SecretName.QODER_TOKEN, note)

            qoder.prepare = token
            return qoder
        if options.backend is Backend.CLAUDE:
            from qoder_desktop.agents.claude import ClaudeSession

            claude = ClaudeSession(info, options, broker, sink)

            async def env() -> None:
                claude.update_env(await self.claude_env(options, note))

            claude.prepare = env
            return claude
        raise ValueError(f"cannot start a session for backend {options.backend.value}")


def sweep_stale_auth_dirs(folder: str | None = None, *, other_instance_running: bool = True,
                          max_age_s: float = STALE_AGE_S) -> list[Path]:
    """Remove access-token and MCP config folders left behind by a crash; returns what went.

    At start-up the app passes whether another instance of it runs: when none does,
    every such folder of this user goes, however young (see `agents.private_files`).
    """
    return sweep_private_dirs(folder, other_instance_running=other_instance_running,
                              max_age_s=max_age_s)
