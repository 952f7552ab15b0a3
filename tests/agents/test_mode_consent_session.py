"""A session switches to, or starts in, a mode that lets tools run unapproved only with
the consent the confirmation dialog minted for it: through the Qoder SDK's real control
protocol (a scripted CLI peer). `mint_consent` stands in for the person's press in the
dialog here; tests/ui prove the dialog is what mints it."""

from __future__ import annotations

import pytest
from helpers.qoder_harness import QoderHarness

from qoder_desktop.agents.sink import SessionStartError
from qoder_desktop.domain.consent import ConsentRefused, ModeConsent
from qoder_desktop.domain.consent_mint import mint_consent
from qoder_desktop.domain.models import Decision, PermissionMode, SessionState
from qoder_desktop.domain.session_options import SessionOptions

pytestmark = pytest.mark.asyncio

EDITS = PermissionMode.ACCEPT_EDITS


async def test_a_caller_without_the_dialogs_consent_cannot_switch_to_a_risky_mode(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start()
    forged = object.__new__(ModeConsent)
    for attempt in (None, True, forged, mint_consent("another-session", EDITS),
                    mint_consent(session_id, PermissionMode.AUTO)):
        written = len(peer.lines)
        with pytest.raises(ConsentRefused):
            await harness.hub.set_mode(session_id, EDITS, consent=attempt)  # type: ignore[arg-type]
        assert len(peer.lines) == written  # nothing reached the CLI
    assert harness.hub.session(session_id).permission_mode is PermissionMode.DEFAULT

    consent = mint_consent(session_id, EDITS)  # the person confirmed in the dialog
    await harness.hub.set_mode(session_id, EDITS, consent=consent)
    assert peer.sdk_requests[-1] == {"subtype": "set_permission_mode", "mode": "acceptEdits"}
    assert harness.hub.session(session_id).permission_mode is EDITS
    await harness.hub.set_mode(session_id, PermissionMode.DEFAULT)  # safe: no consent
    with pytest.raises(ConsentRefused):  # a consent is good for one switch
        await harness.hub.set_mode(session_id, EDITS, consent=consent)
    assert harness.hub.session(session_id).permission_mode is PermissionMode.DEFAULT


async def test_a_risky_start_needs_the_consent_to_exactly_its_risks(
        harness: QoderHarness) -> None:
    with pytest.raises(SessionStartError, match="confirmation"):
        await harness.start(permission_mode=EDITS)
    [failed] = harness.hub.sessions()
    assert failed.state is SessionState.FAILED
    assert not harness.peers[failed.session_id].lines  # the CLI never heard of it

    risky = SessionOptions(cwd=str(harness.workspace), permission_mode=EDITS,
                           allowed_tools=["Bash"])
    shown_only_the_mode = mint_consent(None, EDITS, risky.risks()[:1])
    with pytest.raises(SessionStartError):
        await harness.start(permission_mode=EDITS, allowed_tools=["Bash"],
                            consent=shown_only_the_mode)
    assert all(not peer.lines for peer in harness.peers.values())

    consent = mint_consent(None, EDITS, risky.risks())
    session_id, started = await harness.start(permission_mode=EDITS, allowed_tools=["Bash"],
                                            consent=consent)
    assert started.lines  # this one reached the CLI
    assert harness.hub.session(session_id).state is not SessionState.FAILED
    assert harness.hub.session(session_id).permission_mode is EDITS


async def test_an_approved_plan_without_the_consent_goes_on_in_default_mode(
        harness: QoderHarness) -> None:
    session_id, peer = await harness.start(permission_mode=PermissionMode.PLAN)
    asked = peer.ask("ExitPlanMode", {"plan": "1. Edit everything"})
    request = await harness.next_request()
    harness.hub_events.clear()
    # decided_by USER, next_mode acceptEdits, but no consent from the confirmation box
    harness.broker.answer(request.request_id, Decision.allow_once(
        dict(request.tool_input), next_mode=EDITS))
    assert (await peer.answer(asked.request_id))["behavior"] == "allow"
    await harness.wait_for(lambda: peer.sdk_requests[-1] == {
        "subtype": "set_permission_mode", "mode": "default"}, "the switch to default")
    await harness.wait_for(lambda: any("needs your confirmation" in event.text
                                       for event in harness.hub_events), "the notice")
    assert harness.hub.session(session_id).permission_mode is PermissionMode.DEFAULT
    assert {"subtype": "set_permission_mode", "mode": "acceptEdits"} not in peer.sdk_requests
