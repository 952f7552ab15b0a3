"""A line at the top of a decision dialog saying the ledger could not record an answer."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout

NOTICE_NAME = "storageNotice"
"""The notice label's object name (the stylesheet and tests find it by this)."""


def storage_notice(dialog: QDialog) -> QLabel | None:
    """The dialog's storage notice, if one was ever shown."""
    return dialog.findChild(QLabel, NOTICE_NAME)


def show_storage_notice(dialog: QDialog, text: str | None) -> None:
    """Show `text` at the top of `dialog` (made once, then reused); None hides it."""
    label = storage_notice(dialog)
    if label is None:
        if text is None:
            return
        label = QLabel(dialog)
        label.setObjectName(NOTICE_NAME)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        layout = dialog.layout()
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(0, label)
    if text is None:
        label.hide()
        return
    label.setText(text)
    label.show()
