"""The agent CLIs' hook event names and the terminal agents we take prompts from.

One definition each: the SDK adapters' hook callbacks, the ledger's tool events, the
terminal hook (installer, hook command, server) all name them from here, and so do
the words of our hook command. Stdlib only: the hook command imports this before it
talks to the app, in a blink. It also runs on a remote host's python3 (≥ 3.8) as part of
the standalone hook (`remote.hook_file`) and of the deploy script (`remote.on_host`), so
it keeps to what that python has.
"""

from __future__ import annotations

import sys
from enum import Enum

if sys.version_info >= (3, 11):  # noqa: UP036 - runs on older pythons, see above
    from enum import StrEnum
else:  # a remote host's python3 before 3.11 (see the module docstring)

    class StrEnum(str, Enum):  # noqa: UP042 - `enum.StrEnum` is new in 3.11
        """`enum.StrEnum` of Python 3.11, for older pythons."""

        def __str__(self) -> str:
            return str(self.value)


class HookEvent(StrEnum):
    """A hook event of Claude Code and qodercli, by the name the CLI gives it."""

    PRE_TOOL_USE = "PreToolUse"
    """Before a tool call (the CLI waits for the hook's answer)."""
    POST_TOOL_USE = "PostToolUse"
    """After a tool call that ran without an error."""
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"
    """After a tool call that failed."""
    PERMISSION_DENIED = "PermissionDenied"
    """The CLI denied a tool call itself."""
    PERMISSION_REQUEST = "PermissionRequest"
    """Right before the CLI shows its own permission prompt (terminal agents)."""


class ToolEventPhase(StrEnum):
    """The hook through which a tool call was seen (a ledger tool event's phase): the
    tool hooks of `HookEvent`, by the same names."""

    PRE_TOOL_USE = HookEvent.PRE_TOOL_USE.value
    POST_TOOL_USE = HookEvent.POST_TOOL_USE.value
    POST_TOOL_USE_FAILURE = HookEvent.POST_TOOL_USE_FAILURE.value
    PERMISSION_DENIED = HookEvent.PERMISSION_DENIED.value


class TerminalAgent(StrEnum):
    """The agent CLIs a person runs in a terminal whose prompts we can take (by the
    ``--agent`` word of our hook command)."""

    CLAUDE = "claude"
    QODER = "qoder"

    @property
    def label(self) -> str:
        """The agent's name for people."""
        return "Claude Code" if self is TerminalAgent.CLAUDE else "Qoder CLI"


HOOK_COMMAND = ("hook", "permission-request")
"""The words after our program that run the PermissionRequest hook; the installer writes
them, the hook command reads them, and the session binding looks for them."""
AGENT_OPTION = "--agent"
"""The hook command's option that names the terminal agent asking."""


def hook_arguments(agent: str) -> list[str]:
    """The arguments after our program for `agent`'s hook:
    ``hook permission-request --agent <agent>``."""
    return [*HOOK_COMMAND, AGENT_OPTION, str(agent)]
