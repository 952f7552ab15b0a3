"""The small dialogs of Settings → Remote hosts: adding a host (the SSH destination as
the person types it), and confirming a remove or a forget. All open with `open()`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.plain_text import plain_message_box, set_plain, tooltip
from qoder_desktop.ui.widgets import pickers

ADD_HINT = ("Type the host as you would after ssh: an alias from your ~/.ssh/config, or "
            "user@host. Port, keys, agent and jump hosts come from your OpenSSH "
            "configuration. Qoder Desktop runs your own ssh without asking for a password "
            "(use a key or your ssh-agent), never stores a password or a key, and never "
            "edits ~/.ssh/config.")


class AddHostDialog(QDialog):
    """Asks for an SSH destination (and optionally another OpenSSH config file), then
    shows the add's progress and, when it fails, why. Open it with `open()`.

    Signals:
        add_requested(str, str): add this destination, with this ssh config file ("":
            the person's own).
    """

    add_requested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("addHostDialog")
        self.setWindowTitle("Add a remote host")
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        hint = QLabel(ADD_HINT)
        hint.setWordWrap(True)
        hint.setProperty("role", "hint")
        layout.addWidget(hint)
        form = QFormLayout()
        self.destination_edit = QLineEdit()
        self.destination_edit.setObjectName("destinationEdit")
        self.destination_edit.setPlaceholderText("devbox or me@devbox.example.com")
        self.destination_edit.setAccessibleName("SSH destination")
        form.addRow("SSH &destination:", self.destination_edit)
        config_row = QHBoxLayout()
        self.config_edit = QLineEdit()
        self.config_edit.setObjectName("sshConfigEdit")
        self.config_edit.setPlaceholderText("Your ~/.ssh/config")
        self.config_edit.setAccessibleName("OpenSSH config file")
        self.config_edit.setToolTip("Another OpenSSH client config file for this host "
                                    "(ssh -F FILE); leave it empty to use your own.")
        choose = QPushButton("C&hoose…")
        choose.setObjectName("chooseSshConfig")
        choose.setAccessibleName("Choose an OpenSSH config file")
        choose.clicked.connect(lambda: pickers.pick_file(
            self, "OpenSSH config file", self.config_edit.setText))
        config_row.addWidget(self.config_edit, 1)
        config_row.addWidget(choose)
        config_label = QLabel("SSH &config file:")
        config_label.setBuddy(self.config_edit)
        form.addRow(config_label, config_row)
        layout.addLayout(form)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("addProgressBar")
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumHeight(6)
        self.progress_bar.hide()
        self.progress_label = QLabel()
        self.progress_label.setObjectName("addProgress")
        self.progress_label.setProperty("role", "hint")
        self.progress_label.hide()
        self.error_label = QLabel()
        self.error_label.setObjectName("formError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.error_label)
        layout.addStretch(1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = self.buttons.addButton("&Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setObjectName("addHostButton")
        self.add_button.setAccessibleDescription("Check the host, deploy the hook there and "
                                                 "install it in its agents' settings")
        self.add_button.setDefault(True)
        self.buttons.accepted.connect(self._add)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.destination_edit.textChanged.connect(self._update_button)
        self._running = False
        self._update_button()
        self._fit()

    def _fit(self) -> None:
        """Be as tall as the wrapped texts need at the dialog's width."""
        layout = self.layout()
        width = max(self.width(), self.minimumWidth())
        if layout is not None and layout.hasHeightForWidth():
            self.resize(width, max(layout.totalHeightForWidth(width),
                                   layout.totalMinimumSize().height()))

    @property
    def running(self) -> bool:
        """An add was asked for and has not finished."""
        return self._running

    def _update_button(self) -> None:
        self.add_button.setEnabled(bool(self.destination_edit.text().strip())
                                   and not self._running)

    def _add(self) -> None:
        destination = self.destination_edit.text().strip()
        if not destination or self._running:
            return
        self._running = True
        self.error_label.hide()
        self.destination_edit.setEnabled(False)
        self.config_edit.setEnabled(False)
        self.set_progress(f"Checking {destination}…")
        self._update_button()
        self.add_requested.emit(destination, self.config_edit.text().strip())

    def set_progress(self, step: str) -> None:
        """Show the step the add is at (``Checking box…``)."""
        set_plain(self.progress_label, make_visible(step))
        self.progress_label.show()
        self.progress_bar.show()
        self._fit()

    def finish(self, ok: bool, lines: Sequence[str]) -> None:
        """The add ended: close when it worked, else show why and let the person retry."""
        self._running = False
        self.progress_bar.hide()
        self.progress_label.hide()
        self.destination_edit.setEnabled(True)
        self.config_edit.setEnabled(True)
        self._update_button()
        if ok:
            self.accept()
            return
        set_plain(self.error_label, make_visible("\n".join(lines)))
        self.error_label.show()
        self._fit()
        self.destination_edit.setFocus()


def confirm_remove(parent: QWidget, name: str, on_confirmed: Callable[[], None], *,
                   forget_reason: str | None = None) -> QMessageBox:
    """Ask before taking the hook off host `name` (or, with `forget_reason`, before
    forgetting a host that could not be changed); `on_confirmed()` runs only on yes.

    Returns:
        The open (window-modal) box.
    """
    shown = make_visible(name)
    box = QMessageBox(QMessageBox.Icon.Warning, "Remove a remote host", "", parent=parent)
    box.setObjectName("confirmRemoveHost")
    if forget_reason is None:
        plain_message_box(box, f"Remove {shown}?")
        box.setInformativeText(tooltip(
            f"This takes our hook (only ours) out of the agents' settings on {shown}, "
            "deletes the hook and its token there, and forgets the host on this desk. "
            "Its agents then ask in their terminal again."))
        verb = "Remove"
    else:
        plain_message_box(box, f"Forget {shown} on this desk anyway?")
        box.setInformativeText(tooltip(
            f"{forget_reason}\n\nForgetting it here leaves its "
            "~/.qoder-desktop and our entry in its agents' settings on the host; the "
            "hook there then finds no desk and its agents ask in their terminal."))
        verb = "Forget"
    confirm = box.addButton(verb, QMessageBox.ButtonRole.DestructiveRole)
    confirm.setObjectName("confirmRemoveButton")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)

    def finished() -> None:
        if box.clickedButton() is confirm:
            on_confirmed()
        box.deleteLater()

    box.finished.connect(lambda _code: finished())
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box
