"""Pair a phone: the pairing offer's QR code and address with its expiry, then — once a
phone claimed the token — the short code both screens show, with Confirm and Refuse.

Confirm makes the phone a trusted device of this desk, so it is an approving action
and is guarded as a decision dialog's Allow is (`dialogs/base.py`): inert for the arming
delay after the code appears, and counted only for a click or key from a mouse or
keyboard (`dialogs/input_origin.py`: an injected key or click — `xdotool`, XTEST,
XSendEvent — never confirms a pairing; the dialog says it ignored one). Return never
confirms. Closing the dialog while a phone waits refuses it.

The dialog shows and asks; the controller (`ui/control/away.py`) holds the offer and the
pairing and calls `show_offer`, `show_claim`, `show_paired`, `show_problem`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont, QGuiApplication, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.dialogs.arming import ArmingGate
from qoder_desktop.ui.dialogs.input_origin import InputNote, InputOrigin
from qoder_desktop.ui.plain_text import set_plain
from qoder_desktop.ui.widgets.away import qr_pixmap

SCAN_TEXT = ("Scan this with the phone's camera (the phone must trust this desk's "
             "certificate first: see \"Set up a phone\"), or open the address below "
             "in its browser. The code works once, for a few minutes.")
MATCH_TEXT = "Confirm only if your phone shows the same code."
EXPIRED_TEXT = "This pairing code expired. Close this window and pair again."


def _label(name: str, *, selectable: bool = False) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class PairingDialog(QDialog):
    """Shows a pairing offer and asks the person to confirm the phone that claimed it
    (see the module docstring). Open it with `open()` or `show()`.

    Signals:
        confirmed(str): the person confirmed this pairing id (a real click or key).
        refused(str): the person refused this pairing id, or closed the dialog while it
            waited.
    """

    confirmed = Signal(str)
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pairingDialog")
        self.setWindowTitle("Pair a phone")
        self.setModal(False)
        self._pairing_id: str | None = None
        self._expires_at: datetime | None = None
        self._answered = False
        layout = QVBoxLayout(self)
        self.hint_label = _label("pairingHint")
        set_plain(self.hint_label, SCAN_TEXT)
        self.hint_label.setProperty("role", "hint")
        layout.addWidget(self.hint_label)
        self.qr_label = QLabel()
        self.qr_label.setObjectName("pairingQr")
        self.qr_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.qr_label.setAccessibleName("Pairing QR code")
        self.qr_label.setAccessibleDescription("The phone page's address with a one-time "
                                               "pairing code, for the phone's camera")
        layout.addWidget(self.qr_label)
        self.url_label = _label("pairingUrl", selectable=True)
        self.url_label.setAccessibleName("Pairing address")
        self.copy_button = QPushButton("Cop&y address")
        self.copy_button.setObjectName("copyPairingUrl")
        self.copy_button.setAccessibleDescription("Put the pairing address on the clipboard, "
                                                  "to open it on the phone another way")
        self.copy_button.setAutoDefault(False)
        self.copy_button.clicked.connect(self._copy)
        self.copy_button.hide()
        url_row = QHBoxLayout()
        url_row.addWidget(self.url_label, 1)
        url_row.addWidget(self.copy_button)
        layout.addLayout(url_row)
        self.expiry_label = _label("pairingExpiry")
        layout.addWidget(self.expiry_label)
        self.phone_label = _label("pairingPhone")
        self.phone_label.hide()
        layout.addWidget(self.phone_label)
        self.code_label = _label("pairingCode", selectable=True)
        self.code_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = QFont(self.code_label.font())
        font.setPointSizeF(font.pointSizeF() * 2.5)
        font.setBold(True)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.code_label.setFont(font)
        self.code_label.setAccessibleName("Pairing code")
        self.code_label.hide()
        layout.addWidget(self.code_label)
        self.match_label = _label("pairingMatch")
        set_plain(self.match_label, MATCH_TEXT)
        self.match_label.hide()
        layout.addWidget(self.match_label)
        self.result_label = _label("pairingResult")
        self.result_label.hide()
        layout.addWidget(self.result_label)
        self.input_note = InputNote(self)
        layout.addWidget(self.input_note)
        layout.addStretch(1)  # (once the QR goes, the phone's name, code and check stay together)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.refuse_button = QPushButton("&Refuse")
        self.refuse_button.setObjectName("refusePairing")
        self.refuse_button.setAccessibleDescription("This phone does not become a device "
                                                    "of this desk")
        self.confirm_button = QPushButton("&Confirm")
        self.confirm_button.setObjectName("confirmPairing")
        self.confirm_button.setAccessibleDescription(
            "The phone shows the same code: it may answer this desk's requests")
        self.close_button = QPushButton("Close")
        self.close_button.setObjectName("closePairing")
        for button in (self.refuse_button, self.confirm_button, self.close_button):
            button.setAutoDefault(False)
            button.setDefault(False)
            buttons.addWidget(button)
        self.refuse_button.hide()
        self.confirm_button.hide()
        layout.addLayout(buttons)
        self.gate = ArmingGate(self)
        self.gate.guard(self.confirm_button, lambda: self._claim_open())
        self.origin = InputOrigin.instance()
        self.confirm_button.clicked.connect(self._confirm)
        self.refuse_button.clicked.connect(self._refuse)
        self.close_button.clicked.connect(self.close)
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)

    # -- what the controller calls -------------------------------------------------------

    def show_offer(self, url: str, expires_at: datetime) -> None:
        """Show the offer: its QR code, its address and how long it stays valid."""
        self.qr_label.setPixmap(qr_pixmap(url))
        self.qr_label.show()
        set_plain(self.url_label, url)
        self.copy_button.show()
        self._expires_at = expires_at
        self._tick()
        self._ticker.start()

    def show_claim(self, pairing_id: str, phone_name: str, code: str) -> None:
        """A phone claimed the offer: show its code big, and ask to confirm."""
        self._pairing_id = pairing_id
        self._answered = False
        self._ticker.stop()
        self.qr_label.hide()
        self.expiry_label.hide()
        self.copy_button.hide()
        self.hint_label.hide()  # (the token is used up: nothing is left to scan or open)
        self.url_label.hide()
        set_plain(self.phone_label, f"“{make_visible(phone_name)}” wants to pair with this "
                                    "desk. Its screen shows:")
        self.phone_label.show()
        set_plain(self.code_label, code)
        self.code_label.show()
        self.match_label.show()
        self.result_label.hide()
        self.refuse_button.show()
        self.confirm_button.show()
        self.close_button.hide()
        self.gate.start()  # (a key held from before does not confirm: arms afterwards)
        self.refuse_button.setFocus()

    def show_paired(self, label: str) -> None:
        """The pairing is done: say which device it is."""
        self._end(f"Paired: {make_visible(label)} can answer this desk's requests while "
                  "Away mode is on. Revoke it any time in Settings → Devices.")

    def show_problem(self, text: str) -> None:
        """Pairing failed or was refused: say why."""
        self._end(make_visible(text))

    def pairing_id(self) -> str | None:
        """The pairing that waits for the person's answer (None: none, or answered)."""
        return self._pairing_id if self._claim_open() else None

    def code_text(self) -> str:
        """The code shown (tests, accessibility)."""
        return self.code_label.text() if self.code_label.isVisible() else ""

    # -- what the person does ------------------------------------------------------------

    def _claim_open(self) -> bool:
        return self._pairing_id is not None and not self._answered

    def _confirm(self) -> None:
        pairing_id = self._pairing_id
        if (pairing_id is None or self._answered or not self.gate.is_armed()
                or not self.input_note.allows(self.origin.check(self))):
            return
        self._answered = True
        self.gate.refresh()
        self.refuse_button.setEnabled(False)
        set_plain(self.result_label, "Pairing…")
        self.result_label.show()
        self.confirmed.emit(pairing_id)

    def _refuse(self) -> None:
        pairing_id = self._pairing_id
        if pairing_id is None or self._answered:
            return
        self._answered = True
        self.refused.emit(pairing_id)
        self._end("Refused: that phone is not paired.")

    def _end(self, text: str) -> None:
        self._ticker.stop()
        self._answered = True
        self.gate.disarm()
        self.confirm_button.setEnabled(False)
        self.confirm_button.hide()
        self.refuse_button.hide()
        self.match_label.hide()
        self.copy_button.hide()
        set_plain(self.result_label, text)
        self.result_label.show()
        self.close_button.show()
        self.close_button.setFocus()

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.url_label.text())
        self.copy_button.setText("Copied")

    def _tick(self) -> None:
        if self._expires_at is None:
            return
        left = int((self._expires_at - datetime.now(UTC)).total_seconds())
        if left <= 0:
            self._ticker.stop()
            self.qr_label.clear()
            self.qr_label.hide()
            self.copy_button.hide()
            set_plain(self.expiry_label, EXPIRED_TEXT)
            return
        set_plain(self.expiry_label, f"Expires in {left // 60}:{left % 60:02d}")

    # -- Qt overrides --------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        """Watch where keys and clicks come from while open (see `input_origin`)."""
        super().showEvent(event)
        self.origin.attach(self, self.input_note.tell)
        self.input_note.warn(self.origin.unchecked_note())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Return never confirms (nor presses any button); Escape closes (refuses)."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            return
        super().keyPressEvent(event)

    def done(self, result: int) -> None:
        """Closing while a phone waits refuses it; stop watching the input."""
        self._refuse_open_claim()
        self._ticker.stop()
        self.origin.detach(self)
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the window refuses a pairing that waits."""
        self._refuse_open_claim()
        self.origin.detach(self)
        super().closeEvent(event)

    def _refuse_open_claim(self) -> None:
        if self._claim_open() and self._pairing_id is not None:
            self._answered = True
            self.refused.emit(self._pairing_id)
