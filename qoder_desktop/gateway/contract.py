"""The approval gateway's outside contract: names, token, permission results, snippets.

Agents started elsewhere (a terminal, a script, an editor) hand their permission
prompts to our MCP tool `mcp__qoder-desktop__approve` (see `gateway`). Every request to
the gateway carries a per-install bearer token, kept in the OS keyring under service
``qoder-desktop`` and user name ``gateway-token``. Without a usable keyring the token
comes from ``QODER_DESKTOP_GATEWAY_TOKEN`` or, failing that, is made up for this run
only and kept in memory (`GatewayToken.message` says which). The app reads it when it
is first needed (`LazyGatewayToken`: the first agent's connection, the "Connect an Agent"
dialog, a taken port), not at start: the keyring library and its Secret Service client
cost ~3 MB that a session no agent connects to never needs.

`permission_result` turns a `Decision` into the JSON Claude Code accepts from a
``--permission-prompt-tool`` (``{"behavior": "allow", "updatedInput": {...}}`` or
``{"behavior": "deny", "message": "...", "interrupt": true}``); `parse_arguments`
checks what the tool receives (``{tool_name, input, tool_use_id}``).

`http_stack.BearerAuth` is the ASGI middleware that lets only requests with the token
through (loaded with the HTTP stack, at the first agent connection).
`client_snippets` gives the exact flags and MCP config for Claude Code and qodercli,
with a placeholder instead of the token unless the caller passes the token (the copy
button does; a dialog that merely shows the snippets does not). Qt-free, no asyncio
server here (see `gateway`).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from qoder_desktop.approval.source import ToolCall
from qoder_desktop.approval.source import deny_result as deny_result  # re-exported
from qoder_desktop.approval.source import permission_result as permission_result
from qoder_desktop.config.secrets import (
    GATEWAY_TOKEN_ENV,
    SERVICE_NAME,
    RedactSecrets,
    SecretSource,
    SecretStore,
    SecretValue,
)

log = logging.getLogger(__name__)

SERVER_NAME = "qoder-desktop"
"""The MCP server name agents must use (it is part of the tool's full name)."""
TOOL_NAME = "approve"
PERMISSION_PROMPT_TOOL = f"mcp__{SERVER_NAME}__{TOOL_NAME}"
"""The value for ``--permission-prompt-tool`` / ``permission_prompt_tool_name``."""
MCP_PATH = "/mcp"
LOOPBACK = "127.0.0.1"
CONFIG_FILE_NAME = "qoder-desktop.json"

HTTP_CLOSED = "qoder_desktop.http_closed"
"""Scope key of the `asyncio.Event` that `http_stack.BearerAuth` sets when an HTTP request
is over."""
GATEWAY_TOKEN_KEY = "gateway-token"
"""The keyring user name of the token (service ``qoder-desktop``)."""
GATEWAY_TOKEN_LABEL = "qoder-desktop gateway token"
"""Where the token comes from when no keyring is usable (else a per-run token)."""
TOKEN_PLACEHOLDER = "<qoder-desktop-gateway-token>"


INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_name": {"type": "string", "description": "The tool that asks for permission."},
        "input": {"type": "object", "description": "The tool's input."},
        "tool_use_id": {"type": "string", "description": "The tool call's id."},
    },
    "required": ["tool_name", "input"],
}


def gateway_url(port: int, host: str = LOOPBACK) -> str:
    """The gateway's MCP endpoint on `port`."""
    return f"http://{host}:{port}{MCP_PATH}"


@dataclass(frozen=True)
class GatewayToken:
    """The gateway's bearer token and where it is kept.

    Attributes:
        secret: the token; `reveal()` only where it is compared or copied.
        persistent: True when it is kept in the OS keyring (it survives restarts).
        message: a sentence for people about where the token lives.
    """

    secret: SecretValue
    persistent: bool
    message: str

    def reveal(self) -> str:
        """The token itself. Never log, print or store the result."""
        return self.secret.reveal()


class LazyGatewayToken:
    """The gateway token, read (on the keyring's thread, `keyring_call`) when first needed.

    Until `ensure` has read it, calling it raises `LookupError`, so a request checked
    against it is refused (the gateway's auth fails closed). A failed read is tried again
    at the next `ensure`.

    Args:
        load: reads the token (blocking: `gateway_token`).
        on_slow: called if the keyring takes long (say it is being waited for).
        on_read: called with the token once it has been read.
    """

    def __init__(self, load: Callable[[], GatewayToken],
                 on_slow: Callable[[], None] | None = None,
                 on_read: Callable[[GatewayToken], None] | None = None) -> None:
        self._load = load
        self._on_slow = on_slow
        self._on_read = on_read
        self._value: GatewayToken | None = None
        self._reading: asyncio.Lock | None = None

    @classmethod
    def of(cls, token: GatewayToken) -> LazyGatewayToken:
        """One already read."""
        lazy = cls(lambda: token)
        lazy._value = token
        return lazy

    @property
    def value(self) -> GatewayToken | None:
        """The token once read, else None."""
        return self._value

    @value.setter
    def value(self, token: GatewayToken | None) -> None:
        self._value = token

    def __call__(self) -> GatewayToken:
        """The token read; `LookupError` before it is."""
        if self._value is None:
            raise LookupError("the gateway token has not been read yet")
        return self._value

    async def ensure(self) -> GatewayToken:
        """The token, read now if it was not yet (`KeyringTimeout` if the keyring is
        silent)."""
        from qoder_desktop.config.keyring_calls import keyring_call

        if self._reading is None:
            self._reading = asyncio.Lock()
        async with self._reading:
            if self._value is None:
                self._value = await keyring_call(self._load,
                                                 "read the approval gateway's token",
                                                 on_slow=self._on_slow)
                if self._on_read is not None:
                    self._on_read(self._value)
        return self._value

    def __repr__(self) -> str:
        return f"LazyGatewayToken({'read' if self._value is not None else 'not read'})"


TokenSource = (SecretValue | GatewayToken | str | LazyGatewayToken
               | Callable[[], SecretValue | GatewayToken | str])
"""The bearer token, or a function returning it (read on every request)."""


async def read_token(token: TokenSource) -> str:
    """The token text, read first if it is a `LazyGatewayToken` not read yet."""
    if isinstance(token, LazyGatewayToken):
        await token.ensure()
    return reveal_token(token)


def reveal_token(token: TokenSource) -> str:
    """The token text of a `TokenSource`. Never log, print or store the result."""
    value = token() if callable(token) else token
    return value.reveal() if isinstance(value, SecretValue | GatewayToken) else value


def _from_keyring(store: SecretStore, *, replace: bool) -> tuple[str | None, str]:
    """(token, "") from the keyring, creating it if needed; or (None, why not)."""
    status = store.check_backend()
    if not status.usable:
        return None, status.message
    backend = store.backend
    try:
        existing = None if replace else backend.get_password(SERVICE_NAME, GATEWAY_TOKEN_KEY)
        if existing:
            return existing, ""
        created = secrets.token_urlsafe(32)
        backend.set_password(SERVICE_NAME, GATEWAY_TOKEN_KEY, created)
        read_back = backend.get_password(SERVICE_NAME, GATEWAY_TOKEN_KEY)
    except Exception as exc:  # D-Bus and platform errors are not KeyringErrors
        # The exception text is not shown: it could echo what was being stored.
        return None, f"the keyring failed ({type(exc).__name__})."
    if read_back is None or not hmac.compare_digest(read_back.encode(), created.encode()):
        return None, f"the {status.backend} keyring did not keep the token."
    return created, ""


@dataclass(frozen=True)
class TokenRotation:
    """What replacing a leaked gateway token achieved (see `rotate_after_squatting`).

    Attributes:
        token: the token this run uses from now on.
        rotated: True when the token the agents know is worthless now, also after a
            restart (a new one in the keyring); False when a person must act (the
            token comes from the environment and nothing here can change it).
        advice: sentences for the person: what was done and what they must do.
    """

    token: GatewayToken
    rotated: bool
    advice: str


def rotate_after_squatting(store: SecretStore, *, redactor: RedactSecrets | None = None,
                           environ: Mapping[str, str] | None = None) -> TokenRotation:
    """Replace the gateway token after a squatter held its port (it may have received it).

    The keyring's token is replaced. A token from ``QODER_DESKTOP_GATEWAY_TOKEN`` cannot
    be: this run drops it for a fresh one held in memory (nothing here accepts the old
    one any more), and the advice says to set a new one in the environment, restart and
    set the agents up again, because the next start reads the old one again.
    """
    env = (os.environ if environ is None else environ).get(GATEWAY_TOKEN_ENV, "").strip()
    token = gateway_token(store, redactor=redactor, environ={}, replace=True)
    again = "Restart Qoder Desktop and set up your agents again with the new token."
    if token.persistent:
        return TokenRotation(token, True, "The gateway token in the OS keyring was "
                             "replaced, so the old one is worthless. " + again)
    if env:
        return TokenRotation(token, False, (
            f"The gateway token comes from {GATEWAY_TOKEN_ENV} (no usable keyring), so "
            "Qoder Desktop cannot replace it: the old token still works wherever that "
            "variable is set, and the next start reads it again. This run no longer "
            f"accepts it. Set {GATEWAY_TOKEN_ENV} to a new secret value, restart Qoder "
            "Desktop and set up your agents again with the new token."))
    return TokenRotation(token, True, (
        "The gateway token was held in memory for this run only (no usable keyring) and "
        "was replaced, so the old one is worthless. " + again))


def gateway_token(store: SecretStore, *, redactor: RedactSecrets | None = None,
                  environ: Mapping[str, str] | None = None,
                  replace: bool = False) -> GatewayToken:
    """The per-install gateway token: read from the keyring, created there on first use.

    Without a usable keyring: ``QODER_DESKTOP_GATEWAY_TOKEN`` if set, otherwise a fresh
    token for this run only, held in memory (agents need the new one after a restart).
    `replace` makes a new token (the old one stops working). The token is added to
    `redactor`, so it never reaches a log.
    """
    token, problem = _from_keyring(store, replace=replace)
    if token is not None:
        result = GatewayToken(SecretValue(token, SecretSource.KEYRING), True,
                              f"The gateway token is kept in the OS keyring "
                              f"(service {SERVICE_NAME!r}, user {GATEWAY_TOKEN_KEY!r}).")
    else:
        env = (os.environ if environ is None else environ).get(GATEWAY_TOKEN_ENV, "").strip()
        if env:
            result = GatewayToken(SecretValue(env, SecretSource.ENVIRONMENT), False,
                                  f"No usable keyring ({problem.rstrip('.')}); the gateway "
                                  f"token comes from {GATEWAY_TOKEN_ENV}.")
        else:
            result = GatewayToken(SecretValue(secrets.token_urlsafe(32)), False,
                                  f"No usable keyring ({problem.rstrip('.')}); the gateway "
                                  "token is kept in memory for this run only, so agents need "
                                  f"the new token after every restart (or set "
                                  f"{GATEWAY_TOKEN_ENV}).")
        log.warning("%s", result.message)
    if redactor is not None:
        redactor.add(result.secret)
    return result


def parse_arguments(arguments: Any) -> tuple[str, dict[str, Any], str | None]:
    """(tool_name, input, tool_use_id) from the tool's arguments.

    Raises:
        ValueError: the arguments are not what the permission prompt tool receives.
    """
    if not isinstance(arguments, dict):
        raise ValueError("the arguments must be an object")
    tool_name = arguments.get("tool_name")
    if not isinstance(tool_name, str) or not tool_name.strip():
        raise ValueError("'tool_name' must be a non-empty string")
    tool_input = arguments.get("input")
    if not isinstance(tool_input, dict):
        raise ValueError("'input' must be an object")
    tool_use_id = arguments.get("tool_use_id")
    if tool_use_id is not None and not isinstance(tool_use_id, str):
        raise ValueError("'tool_use_id' must be a string")
    return tool_name, tool_input, tool_use_id or None


def tool_call(arguments: Any) -> ToolCall:
    """The permission prompt in `arguments` as a `ToolCall` (`parse_arguments`).

    The bundled CLI sends no suggestions to a permission prompt tool; a client that sends
    ``permission_suggestions`` has them read like every way in's (`parse_suggestions`).

    Raises:
        ValueError: the arguments are not what the permission prompt tool receives.
    """
    tool_name, tool_input, tool_use_id = parse_arguments(arguments)
    return ToolCall(tool_name, tool_input, tool_use_id,
                    suggestions=arguments.get("permission_suggestions"))


def client_label(name: str | None, version: str | None = None) -> str:
    """The external session's name for an MCP client: ``name version``, printable, short."""
    text = f"{name or ''} {version or ''}".strip()
    text = "".join(ch for ch in text if ch.isprintable())[:80].strip()
    return text or "unknown MCP client"


def _bearer(token: SecretValue | GatewayToken | str | None) -> str:
    if token is None:
        return TOKEN_PLACEHOLDER
    if isinstance(token, SecretValue | GatewayToken):
        return token.reveal()
    return token


def mcp_config(url: str, token: SecretValue | GatewayToken | str | None = None
               ) -> dict[str, Any]:
    """The ``--mcp-config`` JSON (same shape for Claude Code and qodercli)."""
    return {"mcpServers": {SERVER_NAME: {
        "type": "http", "url": url,
        "headers": {"Authorization": f"Bearer {_bearer(token)}"}}}}


def client_snippets(url: str, token: SecretValue | GatewayToken | str | None = None
                    ) -> dict[str, str]:
    """Flags, MCP config and commands that send an agent's permission prompts here.

    The token is a placeholder unless `token` is given: pass it only for the copy
    button, never for text that is merely shown. Keys: ``claude_flags``,
    ``claude_mcp_config``, ``claude_command``, ``claude_mcp_add``, ``claude_sdk``,
    ``qodercli_flags``, ``qodercli_mcp_config``, ``qodercli_command``,
    ``qodercli_mcp_add``, ``qoder_sdk``, ``config_file_name``.
    """
    bearer = _bearer(token)
    config = json.dumps(mcp_config(url, bearer), indent=2)
    flags = f"--mcp-config {CONFIG_FILE_NAME} --permission-prompt-tool {PERMISSION_PROMPT_TOOL}"
    header = f'--header "Authorization: Bearer {bearer}"'
    servers = (f'{{"{SERVER_NAME}": {{"type": "http", "url": "{url}", '
               f'"headers": {{"Authorization": "Bearer {bearer}"}}}}}}')
    return {
        "config_file_name": CONFIG_FILE_NAME,
        "claude_flags": flags,
        "claude_mcp_config": config,
        "claude_command": f'claude -p "your prompt" {flags}',
        "claude_mcp_add": (f"claude mcp add --transport http --scope user {SERVER_NAME} {url} "
                           f"{header}\n# then: claude --permission-prompt-tool "
                           f"{PERMISSION_PROMPT_TOOL}"),
        "claude_sdk": ("ClaudeAgentOptions(\n"
                       f"    mcp_servers={servers},\n"
                       f'    permission_prompt_tool_name="{PERMISSION_PROMPT_TOOL}",\n)'),
        "qodercli_flags": flags,
        "qodercli_mcp_config": config,
        "qodercli_command": f'qodercli -p "your prompt" {flags}',
        "qodercli_mcp_add": (f"qodercli mcp add --transport http --scope user {SERVER_NAME} "
                             f"{url} {header}\n# then: qodercli --permission-prompt-tool "
                             f"{PERMISSION_PROMPT_TOOL}"),
        "qoder_sdk": ("QoderAgentOptions(\n"
                      f"    mcp_servers={servers},\n"
                      f'    permission_prompt_tool_name="{PERMISSION_PROMPT_TOOL}",\n)'),
    }
