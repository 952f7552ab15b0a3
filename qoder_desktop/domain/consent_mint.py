"""The one factory of `ModeConsent`s: for the confirmation dialog only.

`ui.windows.confirm` calls `mint_consent` when the person presses the confirm button of
a risky-mode or risky-options box, and at no other time. An import-linter contract
("Only the confirmation dialog mints mode consents") fails the build when any other
module of the app imports this one.
"""

from __future__ import annotations

from collections.abc import Sequence

from qoder_desktop.domain import consent as _consent
from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.kinds import PermissionMode


def mint_consent(session_id: str | None, mode: PermissionMode,
                 risks: Sequence[str] = ()) -> ModeConsent:
    """A single-use consent to `mode` for `session_id` (None: a session about to start
    with exactly `risks`); call only when the person confirmed in the dialog."""
    return _consent._issue(session_id, mode, risks)
