"""What revoking a session rule does, as the rules view and the history tell the person:
an in-app agent asks again at once, an agent started elsewhere only once one of its
calls is allowed, an ended session not at all."""

from __future__ import annotations

import pytest

from qoder_desktop.domain.kinds import Backend, SessionState
from qoder_desktop.domain.revocation import RevokeReach, revoke_reach

ENDED = (SessionState.STOPPED, SessionState.FAILED)


@pytest.mark.parametrize("backend", [Backend.CLAUDE, Backend.QODER])
@pytest.mark.parametrize("state", list(SessionState))
def test_an_in_app_agent_asks_again_at_once_until_it_has_ended(
        backend: Backend, state: SessionState) -> None:
    expected = RevokeReach.NONE if state in ENDED else RevokeReach.NEXT_CALL
    assert revoke_reach(backend, state) is expected


@pytest.mark.parametrize("backend", [Backend.TERMINAL, Backend.EXTERNAL])
@pytest.mark.parametrize("state", list(SessionState))
def test_an_agent_started_elsewhere_drops_the_rule_with_its_next_allow(
        backend: Backend, state: SessionState) -> None:
    """Its run may outlive what the app knows of it: the removal waits for an allow."""
    assert revoke_reach(backend, state) is RevokeReach.NEXT_ALLOW
