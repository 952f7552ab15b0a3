"""Environment for running the real Claude Code CLI against the scripted model, offline.

Shared by the app's ``--demo`` mode and the tests::

    env = build_cli_env(server.base_url, config_dir, scenario="bash")
    options = ClaudeAgentOptions(cwd=workspace, env=env, setting_sources=[], can_use_tool=...)

The SDK starts the CLI with ``{**os.environ, **options.env}``, so this dict must also
*neutralise* inherited variables that would send traffic elsewhere (cloud providers,
OAuth tokens, a Unix-socket API). An empty string counts as "unset" for those flags.
As a last line of defence, every HTTP(S) proxy points at a closed loopback port, with
the scripted model's host exempted through ``NO_PROXY``: anything the CLI might still
try to reach on the network fails locally instead of leaving the machine.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from .request_info import API_KEY_PREFIX, SCENARIO_HEADER

# Port 9 ("discard") on loopback: nothing listens there, so a proxied request fails fast.
DEAD_PROXY = "http://127.0.0.1:9"

# Variables that would send requests to another provider or with another credential.
_NEUTRALISED = (
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_UNIX_SOCKET",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
    "ANTHROPIC_FOUNDRY_BASE_URL",
    "ANTHROPIC_API_HOST",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_CODE_USE_GATEWAY",
    "CLAUDE_CODE_USE_MANTLE",
    "CLAUDE_CODE_USE_ANTHROPIC_AWS",
    "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD",
    "CLAUDE_CODE_ENABLE_TELEMETRY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)

# Switches that turn off background traffic: updates, telemetry, error reports,
# feature flags, marketplace installs, surveys.
_OFFLINE_FLAGS = (
    "DISABLE_AUTOUPDATER",
    "DISABLE_UPDATES",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_ERROR_REPORTING",
    "DISABLE_GROWTHBOOK",
    "CLAUDE_CODE_DISABLE_FEATURE_FLAGS",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY",
    "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL",
    "DISABLE_COST_WARNINGS",
    "DISABLE_INSTALLATION_CHECKS",
)


def scripted_api_key(scenario: str | None = None) -> str:
    """The API key that selects ``scenario`` on the scripted model (see ``request_info``)."""
    return f"{API_KEY_PREFIX}{scenario}" if scenario else f"{API_KEY_PREFIX}model"


def build_cli_env(
    base_url: str,
    config_dir: str | os.PathLike[str],
    *,
    scenario: str | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """Env vars for a Claude Code CLI session talking only to the scripted model at ``base_url``.

    ``config_dir`` becomes ``CLAUDE_CONFIG_DIR`` (use a temporary directory: never the
    user's ``~/.claude``); it is created if missing, and its ``tmp`` subfolder becomes
    ``CLAUDE_CODE_TMPDIR``. ``scenario`` selects the scenario for
    the whole session (a ``[scenario:NAME]`` marker in a prompt still wins). ``extra``
    is applied last.
    """
    host = urlsplit(base_url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"the scripted model must be on loopback, got {base_url!r}")
    Path(config_dir).mkdir(parents=True, exist_ok=True)
    tmp_dir = Path(config_dir) / "tmp"
    tmp_dir.mkdir(exist_ok=True)
    env: dict[str, str] = {name: "" for name in _NEUTRALISED}
    env.update({name: "1" for name in _OFFLINE_FLAGS})
    no_proxy = "127.0.0.1,localhost,::1"
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url.rstrip("/"),
            "ANTHROPIC_API_KEY": scripted_api_key(scenario),
            "CLAUDE_CONFIG_DIR": str(config_dir),
            # The CLI's scratch files (otherwise /tmp/claude-<uid>/...) stay with the config.
            "CLAUDE_CODE_TMPDIR": str(tmp_dir),
            "HTTPS_PROXY": DEAD_PROXY,
            "HTTP_PROXY": DEAD_PROXY,
            "https_proxy": DEAD_PROXY,
            "http_proxy": DEAD_PROXY,
            "NO_PROXY": no_proxy,
            "no_proxy": no_proxy,
        }
    )
    if scenario:
        env["ANTHROPIC_CUSTOM_HEADERS"] = f"{SCENARIO_HEADER}: {scenario}"
    else:
        env["ANTHROPIC_CUSTOM_HEADERS"] = ""
    if extra:
        env.update(extra)
    return env
