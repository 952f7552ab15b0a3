"""Where a revoked session rule can reach the agent that holds it, and when.

The agent's CLI holds every session grant it was sent; it can only be told to drop one
inside an answer to one of its requests, and only in an allow (checked against Claude
Code: a ``removeRules`` update in a denied hook answer is ignored). Plain enums, no
pydantic: the main window uses this before the models load.
"""

from __future__ import annotations

from enum import StrEnum

from qoder_desktop.domain.kinds import Backend, SessionState


class RevokeReach(StrEnum):
    """What revoking a rule of a session does."""

    NEXT_CALL = "next_call"
    """An in-app session: the next matching call asks again at once (its PreToolUse
    hook answers "ask"); the CLI drops the rule with the next request allowed."""
    NEXT_ALLOW = "next_allow"
    """A terminal or gateway agent: it keeps the rule, and runs matching calls without
    asking, until the next request allowed from it carries the removal."""
    NONE = "none"
    """The session has ended: its agent is gone, and its rules with it."""


_ENDED = (SessionState.STOPPED, SessionState.FAILED)


def revoke_reach(backend: Backend, state: SessionState) -> RevokeReach:
    """What revoking a rule of a session of `backend` in `state` does."""
    if backend in (Backend.CLAUDE, Backend.QODER):
        return RevokeReach.NONE if state in _ENDED else RevokeReach.NEXT_CALL
    return RevokeReach.NEXT_ALLOW
