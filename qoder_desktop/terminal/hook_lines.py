"""What one terminal hook connection says and hears, past the challenge: the request
line read (`parse_hook_event`), the answer the hook prints (`hook_output`), the hook
leaving while a person is asked (`hook_leaves`: answered or cancelled in the terminal, a
remote hook's transcript lines meanwhile), its confirmation that it printed an answer
(`printed`), and sealed lines sent (`send`). `server` runs the connection's life.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from qoder_desktop.approval.source import permission_result
from qoder_desktop.domain.hook_events import HookEvent, TerminalAgent
from qoder_desktop.domain.models import Decision, RuleValue
from qoder_desktop.terminal import protocol
from qoder_desktop.terminal.remote_transcript import RemoteTranscripts

log = logging.getLogger(__name__)

PRINTED_TIMEOUT = 5.0
"""How long the hook may take to confirm it printed an answer carrying revocations."""

ANSWERED_IN_TERMINAL = "Answered in the terminal."
LEFT_IN_TERMINAL = "Answered or cancelled in the terminal."


def parse_hook_event(message: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(agent, hook input) from the hook's request line.

    Raises:
        ValueError: it is not a PermissionRequest hook input we can ask about.
    """
    agent = message.get("agent")
    event = message.get("event")
    if agent not in set(TerminalAgent):
        raise ValueError(f"unknown agent {agent!r}")
    if not isinstance(event, dict):
        raise ValueError("'event' must be an object")
    if event.get("hook_event_name", HookEvent.PERMISSION_REQUEST) != HookEvent.PERMISSION_REQUEST:
        raise ValueError("not a PermissionRequest hook")
    for key in ("session_id", "tool_name"):
        if not isinstance(event.get(key), str) or not event[key].strip():
            raise ValueError(f"{key!r} must be a non-empty string")
    if not isinstance(event.get("tool_input"), dict):
        raise ValueError("'tool_input' must be an object")
    for key in ("cwd", "transcript_path", "permission_mode"):
        if event.get(key) is not None and not isinstance(event[key], str):
            raise ValueError(f"{key!r} must be a string")
    return str(agent), event


def hook_output(decision: Decision, removals: Sequence[RuleValue] = ()) -> dict[str, Any]:
    """What the hook prints for `decision` (the CLI holds session grants itself); an allow
    also tells the CLI to drop `removals` (Claude Code ignores updates in a deny)."""
    return {"hookSpecificOutput": {"hookEventName": HookEvent.PERMISSION_REQUEST.value,
                                   "decision": permission_result(decision, removals)}}


async def hook_leaves(reader: asyncio.StreamReader, sealer: protocol.Sealer,
                      session_id: str, transcripts: RemoteTranscripts | None) -> str:
    """Return (why) when the hook says "withdraw" (answered in the terminal, when it saw
    the call's result in its transcript), hangs up, or sends a line not sealed with this
    connection's key; the transcript lines a remote hook sends meanwhile are shown under
    the request's session (`session_id`)."""
    reason = LEFT_IN_TERMINAL
    with contextlib.suppress(ConnectionError, ValueError):
        while line := await reader.readline():
            message = sealer.open(line)
            if message.get("type") == protocol.TRANSCRIPT and transcripts is not None:
                transcripts.take(session_id, message.get("lines"))
            if message.get("type") == protocol.WITHDRAW:
                if message.get(protocol.ANSWERED) is True:
                    reason = ANSWERED_IN_TERMINAL
                break
    return reason


async def printed(reader: asyncio.StreamReader, sealer: protocol.Sealer) -> bool:
    """True once the hook says it printed our answer for the CLI."""
    try:
        line = await asyncio.wait_for(reader.readline(), PRINTED_TIMEOUT)
        return sealer.open(line).get("type") == protocol.PRINTED
    except (TimeoutError, ConnectionError, ValueError):
        log.info("terminal hooks: the hook did not confirm it printed our answer; the "
                 "revocations it carried go with the next allow")
        return False


async def send(writer: asyncio.StreamWriter, sealer: protocol.Sealer,
               message: Mapping[str, Any]) -> None:
    """Send `message` sealed with this connection's key."""
    writer.write(sealer.seal(message))
    await writer.drain()
