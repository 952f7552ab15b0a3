"""How the info of a terminal agent's session follows its CLI.

A terminal agent runs in a person's terminal, not in the app: the hub knows its session
only from its requests, by the CLI's session id. Its info is made on first use (named
for its host, agent and folder); then its permission mode follows what the CLI reports
with each request, and a request of an ended session (resumed in a new CLI) makes it
run again. The hub stores, saves and publishes what these functions work out.
"""

from __future__ import annotations

import os

from qoder_desktop.agents.ended_sessions import ENDED
from qoder_desktop.domain.models import Backend, PermissionMode, SessionInfo, SessionState


def known_mode(value: str | None) -> PermissionMode | None:
    """The permission mode a CLI reported, or None when it reported none or one unknown here."""
    try:
        return PermissionMode(value) if value else None
    except ValueError:
        return None


def first_terminal_info(session_id: str, agent_label: str, cwd: str,
                        mode: PermissionMode | None, host: str | None) -> SessionInfo:
    """The info of a terminal session seen for the first time: running, in the mode its
    CLI reported (default if none), named for its host, agent and folder."""
    folder = os.path.basename(os.path.normpath(cwd)) if cwd else ""
    name = f"{agent_label} · {folder}" if folder else agent_label
    return SessionInfo(session_id=session_id, name=f"{host} · {name}" if host else name,
                       backend=Backend.TERMINAL, cwd=cwd, state=SessionState.RUNNING,
                       permission_mode=mode or PermissionMode.DEFAULT, host=host)


def followed_terminal_info(info: SessionInfo, mode: PermissionMode | None) -> SessionInfo | None:
    """A known terminal session's info after a request in `mode`: the new mode if it
    changed, running again if it had ended (resumed in a new CLI); None if neither."""
    new_mode = mode is not None and info.permission_mode is not mode
    resumed = info.state in ENDED
    if not (new_mode or resumed):
        return None
    return info.model_copy(update={
        "permission_mode": mode if new_mode else info.permission_mode,
        "state": SessionState.RUNNING if resumed else info.state})
