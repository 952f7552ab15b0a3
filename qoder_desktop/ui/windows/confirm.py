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
    confirm = box.addButton(f"Use {mode.value}", QMessageBox.ButtonRole.DestructiveRole)
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

