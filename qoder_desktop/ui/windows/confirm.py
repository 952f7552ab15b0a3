"""The explicit confirmation a person gives before a mode or session options that let
tools run unapproved.

A `Confirmation` is a message box you can await (qtrio style): `await box.wait()`
returns once the person confirmed and raises `UserCancelled` when they did not; its
`shown` signal tells tests the box is up. It opens with `open()` (never `exec()`, which
would nest an event loop under qasync). Views, which never await, use the callback form
(`confirm_dangerous_mode(parent, mode, on_done)`) built on the same box.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from qoder_desktop.domain.kinds import PermissionMode


class UserCancelled(Exception):
    """The person cancelled the confirmation (or closed it)."""


class Confirmation(QObject):
    """A warning box with a confirm button and Cancel (the default, and Escape).

    Signals:
        shown(): the box was opened.
        answered(bool): once, True when the person confirmed.
    """

    shown = Signal()
    answered = Signal(bool)

    def __init__(self, box: QMessageBox, confirm_text: str) -> None:
        super().__init__(box)
        self.box = box
        self._confirm = box.addButton(confirm_text, QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        self.result: bool | None = None
        box.finished.connect(self._finished)

    def _finished(self) -> None:
        if self.result is not None:
            return
        self.result = self.box.clickedButton() is self._confirm
        self.box.deleteLater()
        self.answered.emit(self.result)

    def open(self) -> None:
        """Show the box without blocking (window-modal to its parent)."""
        self.box.open()
        self.shown.emit()

    async def wait(self) -> None:
        """Open the box (if it is not open) and wait for the answer.

        Raises:
            UserCancelled: the person chose Cancel, pressed Escape or closed the box.
        """
        confirmed = self.result
        if confirmed is None:
            future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

            def answered(ok: bool) -> None:
                if not future.done():
                    future.set_result(ok)

            self.answered.connect(answered)
            if not self.box.isVisible():
                self.open()
            confirmed = await future
        if not confirmed:
            raise UserCancelled


def dangerous_mode_confirmation(parent: QWidget, mode: PermissionMode) -> Confirmation:
    """The (not yet open) box asking whether the person really wants `mode`."""
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
    return Confirmation(box, f"Use {mode.value}")


def risky_options_confirmation(parent: QWidget, risks: list[str]) -> Confirmation:
    """The (not yet open) box asking whether the person really wants session options that
    let tools run unapproved (`SessionOptions.risks`)."""
    box = QMessageBox(parent)
    box.setObjectName("confirmRiskyOptions")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Let tools run without asking?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText("These session options let tools run that nobody approved:\n\n"
                + "\n".join(f"• {risk}" for risk in risks))
    box.setInformativeText("Those calls will not come to Qoder Desktop.")
    return Confirmation(box, "Start anyway")


def _open(confirmation: Confirmation, on_done: Callable[[bool], None]) -> QMessageBox:
    confirmation.answered.connect(on_done)
    confirmation.open()
    return confirmation.box


def confirm_dangerous_mode(parent: QWidget, mode: PermissionMode,
                           on_done: Callable[[bool], None]) -> QMessageBox:
    """Ask (without blocking) whether the person really wants `mode`; `on_done` is called
    once with True when they confirmed, False otherwise. Returns the open box."""
    return _open(dangerous_mode_confirmation(parent, mode), on_done)


def confirm_risky_options(parent: QWidget, risks: list[str],
                          on_done: Callable[[bool], None]) -> QMessageBox:
    """Ask (without blocking) whether the person really wants session options that let
    tools run unapproved; `on_done(True)` once they confirm. Returns the open box."""
    return _open(risky_options_confirmation(parent, risks), on_done)
