"""Choosing how a session runs: which backend, which credentials, which environment.

`SessionLauncher` is the hub's session factory. With a `DemoModel` it points every
Claude session at the scripted model on loopback with a throw-away CLI config folder;
otherwise it passes the user's credentials (keyring first, then the environment).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from qoder_desktop.agents.base import AgentSession, SessionSink
from qoder_desktop.agents.private_files import AUTH_DIR_PREFIX as AUTH_DIR_PREFIX
from qoder_desktop.agents.private_files import STALE_AGE_S, sweep_private_dirs
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import SecretName, SecretStore, SecretStoreError
from qoder_desktop.domain.models import Backend, SessionInfo
from qoder_desktop.domain.session_options import SessionOptions

log = logging.getLogger(__name__)

DEMO_SCENARIO = "demo"


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
    """Builds the backend adapter for a new session (the hub's `SessionFactory`)."""

    def __init__(self, secrets: SecretStore, *, anthropic_base_url: str | None = None,
                 demo: DemoModel | None = None) -> None:
        self._secrets = secrets
        self._anthropic_base_url = anthropic_base_url
        self._demo = demo

    def _secret(self, name: SecretName) -> str | None:
        try:
            value = self._secrets.get(name)
        except SecretStoreError as exc:
            log.warning("could not read %s: %s", name.label, exc)
            return None
        return value.reveal() if value is not None else None

    def claude_env(self, options: SessionOptions) -> dict[str, str]:
        """The environment for a Claude Code CLI session."""
        if self._demo is not None:
            from qoder_desktop.scripted_model.cli_env import build_cli_env

            return build_cli_env(self._demo.base_url, self._demo.config_dir,
                                 scenario=options.scenario or DEMO_SCENARIO)
        env: dict[str, str] = {}
        key = self._secret(SecretName.ANTHROPIC_API_KEY)
        if key:
            env["ANTHROPIC_API_KEY"] = key
        if self._anthropic_base_url:
            env["ANTHROPIC_BASE_URL"] = self._anthropic_base_url
        return env

    def __call__(self, info: SessionInfo, options: SessionOptions, broker: ApprovalBroker,
                 sink: SessionSink) -> AgentSession:
        """Build the adapter for `options.backend`."""
        if options.backend is Backend.QODER:
            from qoder_desktop.agents.qoder import QoderSession

            session = QoderSession(info, options, broker, sink)
            session.access_token = self._secret(SecretName.QODER_TOKEN)
            return session
        if options.backend is Backend.CLAUDE:
            from qoder_desktop.agents.claude import ClaudeSession

            return ClaudeSession(info, options, broker, sink, env=self.claude_env(options))
        raise ValueError(f"cannot start a session for backend {options.backend.value}")


def sweep_stale_auth_dirs(folder: str | None = None, *, other_instance_running: bool = True,
                          max_age_s: float = STALE_AGE_S) -> list[Path]:
    """Remove access-token and MCP config folders left behind by a crash; returns what went.

    At start-up the app passes whether another instance of it runs: when none does,
    every such folder of this user goes, however young (see `agents.private_files`).
    """
    return sweep_private_dirs(folder, other_instance_running=other_instance_running,
                              max_age_s=max_age_s)
