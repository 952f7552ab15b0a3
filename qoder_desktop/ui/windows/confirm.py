"""The explicit confirmation a person gives before a mode or session options that let
tools run unapproved.

A `Confirmation` is a message box you can await (qtrio style): `await box.wait()`
returns the person's `ModeConsent` once they confirmed and raises `UserCancelled` when
they did not; its `shown` signal tells tests the box is up. It opens with `open()`
(never `exec()`, which would nest an event loop under qasync). Views, which never await,
use the callback form (`confirm_dangerous_mode(parent, mode, on_done)`) built on the same
box.

This is the only place a `ModeConsent` is minted (`domain.consent_mint`; an import-linter
contract keeps it so): in `_finished`, when the box closed by its confirm button. The
consent names what the box asked about — the session (None for one about to start), the
mode, and for a start the risks it listed — and is good for one use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.consent_mint import mint_consent
from qoder_desktop.domain.kinds import PermissionMode

if TYPE_CHECKING:  # the main window (which imports this) is shown before asyncio loads
    import asyncio

ConsentCallback = Callable[[ModeConsent | None], None]
"""Called once with the person's consent, or None when they did not confirm."""


class UserCancelled(Exception):
    """The person cancelled the confirmation (or closed it)."""


class Confirmation(QObject):
    """A warning box with a confirm button and Cancel (the default, and Escape).

    Signals:
        shown(): the box was opened.
        answered(object): once: the minted `ModeConsent` when the person confirmed,
            else None.

    Args:
        box: the message box (its texts set).
        confirm_text: the confirm button's label.
        session_id: the session the consent is for (None: a session about to start).
        mode: the mode the consent is for.
        risks: for a start, the risks the box lists.
    """

    shown = Signal()
    answered = Signal(object)

    def __init__(self, box: QMessageBox, confirm_text: str, *, session_id: str | None,
                 mode: PermissionMode, risks: Sequence[str] = ()) -> None:
        super().__init__(box)
        self.box = box
        self._confirm = box.addButton(confirm_text, QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        self._subject = (session_id, mode, tuple(risks))
        self.result: bool | None = None
        self._consent: ModeConsent | None = None
        box.finished.connect(self._finished)

    def _finished(self) -> None:
        if self.result is not None:
            return
        self.result = self.box.clickedButton() is self._confirm
        if self.result:  # the person pressed the confirm button: the one place to mint
            session_id, mode, risks = self._subject
            self._consent = mint_consent(session_id, mode, risks)
        self.box.deleteLater()
        self.answered.emit(self._consent)

    def open(self) -> None:
        """Show the box without blocking (window-modal to its parent)."""
        self.box.open()
        self.shown.emit()

    async def wait(self) -> ModeConsent:
        """Open the box (if it is not open) and wait for the person's consent.

        Raises:
            UserCancelled: the person chose Cancel, pressed Escape or closed the box.
        """
        if self.result is None:
            import asyncio

            future: asyncio.Future[ModeConsent | None] = (
                asyncio.get_running_loop().create_future())

            def answered(consent: ModeConsent | None) -> None:
                if not future.done():
                    future.set_result(consent)

            self.answered.connect(answered)
            if not self.box.isVisible():
                self.open()
            await future
        if self._consent is None:
            raise UserCancelled
        return self._consent


def dangerous_mode_confirmation(parent: QWidget, mode: PermissionMode, *,
                                session_id: str | None = None,
                                risks: Sequence[str] = ()) -> Confirmation:
    """The (not yet open) box asking whether the person really wants `mode` for
    `session_id` (None: a new session starting with `risks`, that mode's one line)."""
    box = QMessageBox(parent)
    box.setObjectName("confirmDangerousMode")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Run tools without asking?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(f"In {mode.value} mode {mode.risk_text}.")
    box.setInformativeText(
        "Nothing will ask you first, and no session rule can stop a tool call. "
        "Use it only in a throw-away workspace." if mode.is_dangerous else
        "Those calls will not come to Qoder Desktop. Switch back to default to be asked.")
    return Confirmation(box, f"Use {mode.value}", session_id=session_id, mode=mode,
                        risks=risks)


def risky_options_confirmation(parent: QWidget, risks: list[str],
                               mode: PermissionMode) -> Confirmation:
    """The (not yet open) box asking whether the person really wants to start a session in
    `mode` with options that let tools run unapproved (`SessionOptions.risks`)."""
    box = QMessageBox(parent)
    box.setObjectName("confirmRiskyOptions")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Let tools run without asking?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText("These session options let tools run that nobody approved:\n\n"
                + "\n".join(f"• {risk}" for risk in risks))
    box.setInformativeText("Those calls will not come to Qoder Desktop.")
    return Confirmation(box, "Start anyway", session_id=None, mode=mode, risks=risks)


def _open(confirmation: Confirmation, on_done: ConsentCallback) -> QMessageBox:
    confirmation.answered.connect(on_done)
    confirmation.open()
    return confirmation.box


def confirm_dangerous_mode(parent: QWidget, mode: PermissionMode, on_done: ConsentCallback,
                           *, session_id: str | None = None,
                           risks: Sequence[str] = ()) -> QMessageBox:
    """Ask (without blocking) whether the person really wants `mode` for `session_id`
    (None: a new session starting with `risks`); `on_done` is called once with their
    `ModeConsent`, or None. Returns the open box."""
    return _open(dangerous_mode_confirmation(parent, mode, session_id=session_id,
                                             risks=risks), on_done)


def confirm_risky_options(parent: QWidget, risks: list[str], mode: PermissionMode,
                          on_done: ConsentCallback) -> QMessageBox:
    """Ask (without blocking) whether the person really wants to start a session in `mode`
    with options that let tools run unapproved; `on_done` gets their `ModeConsent` (or
    None). Returns the open box."""
    return _open(risky_options_confirmation(parent, risks, mode), on_done)
