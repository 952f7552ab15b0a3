"""A `ModeConsent` is a value only the confirmation dialog makes: nothing else passes
`spend`, and a real one passes once, for exactly what the person confirmed."""

from __future__ import annotations

import copy
import pickle

import pytest

from qoder_desktop.domain.consent import ConsentRefused, ModeConsent, spend
from qoder_desktop.domain.consent_mint import mint_consent
from qoder_desktop.domain.models import Decision, PermissionMode
from qoder_desktop.domain.session_options import SessionOptions

EDITS = PermissionMode.ACCEPT_EDITS


def test_nothing_but_a_minted_consent_passes() -> None:
    with pytest.raises(TypeError, match="only from the confirmation dialog"):
        ModeConsent("s1", EDITS)
    forged = object.__new__(ModeConsent)  # around the constructor: not in the register
    object.__setattr__(forged, "session_id", "s1")
    object.__setattr__(forged, "mode", EDITS)
    object.__setattr__(forged, "risks", ())
    for fake in (True, 1, "yes", None, forged):
        with pytest.raises(ConsentRefused, match="needs the person's confirmation"):
            spend(fake, session_id="s1", mode=EDITS)


def test_a_consent_is_spent_once_and_only_for_its_session_and_mode() -> None:
    consent = mint_consent("s1", EDITS)
    with pytest.raises(ConsentRefused, match="not what the person confirmed"):
        spend(consent, session_id="s2", mode=EDITS)
    with pytest.raises(ConsentRefused, match="not what the person confirmed"):
        spend(consent, session_id="s1", mode=PermissionMode.BYPASS)
    with pytest.raises(ConsentRefused, match="not what the person confirmed"):
        spend(consent, session_id=None, mode=EDITS)  # not a start consent
    spend(consent, session_id="s1", mode=EDITS)
    with pytest.raises(ConsentRefused):
        spend(consent, session_id="s1", mode=EDITS)  # single use


def test_a_start_consent_covers_exactly_the_risks_the_dialog_listed() -> None:
    options = SessionOptions(cwd="/w", permission_mode=EDITS, allowed_tools=["Bash"])
    consent = mint_consent(None, EDITS, options.risks()[:1])  # the Bash rule not shown
    with pytest.raises(ConsentRefused):
        spend(consent, session_id=None, mode=EDITS, risks=options.risks())
    consent = mint_consent(None, EDITS, options.risks())
    spend(consent, session_id=None, mode=EDITS, risks=options.risks())


def test_a_consent_cannot_be_changed_pickled_or_duplicated_and_never_serializes() -> None:
    consent = mint_consent("s1", EDITS)
    with pytest.raises(AttributeError):
        consent.mode = PermissionMode.BYPASS  # type: ignore[misc]
    with pytest.raises(TypeError):
        pickle.dumps(consent)
    assert copy.copy(consent) is consent and copy.deepcopy(consent) is consent
    decision = Decision.allow_once({}, next_mode=EDITS, consent=consent)
    assert "consent" not in decision.model_dump()
    assert decision.model_copy(deep=True).consent is consent
    assert repr(consent) == "<ModeConsent acceptEdits for session s1>"
