"""A person's confirmation of a risky permission mode, as a value nobody else can make.

A mode that lets tools run unapproved (`PermissionMode.needs_confirmation`) — switched to
mid-session, or chosen with other risky options for a new session — needs a
`ModeConsent`. Only the confirmation dialog (`ui.windows.confirm`) mints one, through the
narrow factory `consent_mint.mint_consent`, when the person presses its confirm button
(an import-linter contract keeps every other module from importing that factory). A
consent names what the person saw — the session (None: one about to start), the mode,
and for a start every risk listed — and is spent where it is used (`spend`, called by
`AgentSession.set_mode` and `AgentSession.start`): once, and only for exactly that.

A bool, a `ModeConsent(...)` call (refused), an object made around the constructor, a
copy or a pickle is not in the private register of issued consents, so `spend` refuses
it; so is a consent already spent.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from qoder_desktop.domain.kinds import PermissionMode


class ConsentRefused(PermissionError):
    """A risky mode was asked for without a valid, unspent confirmation for it."""


class ModeConsent:
    """The person confirmed `mode` for `session_id` in the confirmation dialog.

    Attributes:
        session_id: the session it was confirmed for (None: a session about to start).
        mode: the permission mode it allows switching to (or starting in).
        risks: for a start, every risk the dialog listed (`SessionOptions.risks`).

    Cannot be constructed (only `consent_mint.mint_consent` makes one), copied into a
    new object or pickled; it is immutable.
    """

    __slots__ = ("__weakref__", "mode", "risks", "session_id")
    session_id: str | None
    mode: PermissionMode
    risks: tuple[str, ...]

    def __new__(cls, *_args: Any, **_kwargs: Any) -> ModeConsent:
        """Refused: a consent comes only from the confirmation dialog."""
        raise TypeError("a ModeConsent comes only from the confirmation dialog")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a ModeConsent cannot be changed")

    def __copy__(self) -> ModeConsent:
        return self  # the same consent, still spent only once

    def __deepcopy__(self, _memo: dict[int, Any]) -> ModeConsent:
        return self

    def __reduce__(self) -> str:
        raise TypeError("a ModeConsent cannot be pickled")

    def __repr__(self) -> str:
        target = f"session {self.session_id}" if self.session_id else "a new session"
        return f"<ModeConsent {self.mode.value} for {target}>"


_issued: weakref.WeakSet[ModeConsent] = weakref.WeakSet()
"""Every consent the confirmation dialog minted and nobody spent yet (private)."""


def _issue(session_id: str | None, mode: PermissionMode,
           risks: Sequence[str]) -> ModeConsent:
    """Make and register a consent (for `consent_mint` only)."""
    consent: ModeConsent = object.__new__(ModeConsent)
    for name, value in (("session_id", session_id), ("mode", PermissionMode(mode)),
                        ("risks", tuple(risks))):
        object.__setattr__(consent, name, value)
    _issued.add(consent)
    return consent


def spend(consent: object, *, session_id: str | None, mode: PermissionMode,
          risks: Sequence[str] | None = None) -> None:
    """Check `consent` at the point of use and use it up.

    Args:
        consent: what the caller holds (anything but a minted consent is refused).
        session_id: the session being switched (None: the session being started).
        mode: the mode being switched to or started in.
        risks: for a start, the risks of the options being started with.

    Raises:
        ConsentRefused: no consent, a forged or spent one, or one for something else.
    """
    wanted = f"{mode.value} for " + (f"session {session_id}" if session_id else
                                     "a new session")
    if not isinstance(consent, ModeConsent) or consent not in _issued:
        raise ConsentRefused(f"{wanted} needs the person's confirmation in the "
                             "confirmation dialog")
    if (consent.session_id != session_id or consent.mode is not mode
            or (risks is not None and tuple(risks) != consent.risks)):
        raise ConsentRefused(f"{wanted} was not what the person confirmed ({consent!r})")
    _issued.discard(consent)
