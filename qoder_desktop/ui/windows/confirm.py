"""The explicit confirmation a person gives before a mode that lets tools run unapproved.

The box opens with `open()` (never `exec()`, which would nest an event loop under
qasync); its answer arrives later through a callback. Views call it through this
module (`confirm.confirm_dangerous_mode(...)`) so tests can replace it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from qoder_desktop.domain.models import PermissionMode


def confirm_dangerous_mode(parent: QWidget, mode: PermissionMode,
                           on_done: Callable[[bool], None]) -> QMessageBox:
    """Ask (without blocking) whether the person really wants `mode`.

    Args:
        parent: the window the box is modal to.
        mode: the bypass mode the person chose.
        on_done: called once with True when they confirmed, False otherwise.

    Returns:
        The open message box (tests and callers may close it).
    """
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
    return _open(box, f"Use {mode.value}", on_done)


def _open(box: QMessageBox, confirm_text: str, on_done: Callable[[bool], None]) -> QMessageBox:
    """Add the confirm and Cancel buttons (Cancel is the default), open the box, and call
    `on_done` once with whether the person confirmed."""
    confirm = box.addButton(confirm_text, QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    answered: list[bool] = []

    def finished() -> None:
        if answered:
            return
        answered.append(box.clickedButton() is confirm)
        box.deleteLater()
        on_done(answered[0])

    box.finished.connect(finished)
    box.open()
    return box


def confirm_risky_options(parent: QWidget, risks: list[str],
                          on_done: Callable[[bool], None]) -> QMessageBox:
    """Ask (without blocking) whether the person really wants session options that let
    tools run unapproved (`SessionOptions.risks`); `on_done(True)` once they confirm."""
    box = QMessageBox(parent)
    box.setObjectName("confirmRiskyOptions")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Let tools run without asking?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText("These session options let tools run that nobody approved:\n\n"
                + "\n".join(f"• {risk}" for risk in risks))
    box.setInformativeText("Those calls will not come to Qoder Desktop.")
    return _open(box, "Start anyway", on_done)
