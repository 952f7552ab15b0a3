"""Asking before quitting while requests wait for an answer.

The box opens with `open()` (never `exec()`, which would nest an event loop under
qasync); its answer arrives later through a callback. Quitting denies what waits (the
app wiring does that, with a message the agent sees), so the question says so.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

QUIT_BUTTON_TEXT = "&Quit and deny"


def quit_question(waiting: int) -> str:
    """The box's text for `waiting` pending requests."""
    what = "1 request is" if waiting == 1 else f"{waiting} requests are"
    return f"{what} waiting for your answer."


def confirm_quit(parent: QWidget, waiting: int, on_quit: Callable[[], None]) -> QMessageBox:
    """Ask (without blocking) whether to quit although `waiting` requests are pending.

    Args:
        parent: the window the box is modal to.
        waiting: how many requests wait.
        on_quit: called once, only when the person chose to quit.

    Returns:
        The open message box (Cancel is the default and the Escape button).
    """
    box = QMessageBox(parent)
    box.setObjectName("confirmQuit")
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Quit Qoder Desktop?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(quit_question(waiting))
    box.setInformativeText(
        "Quitting denies them and stops the sessions started here; the agents are told "
        "that Qoder Desktop was quit. Requests from terminal agents go back to their "
        "terminal.")
    quit_button = box.addButton(QUIT_BUTTON_TEXT, QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    done: list[bool] = []

    def finished() -> None:
        if done:
            return
        done.append(True)
        box.deleteLater()
        if box.clickedButton() is quit_button:
            on_quit()

    box.finished.connect(finished)
    box.open()
    return box
