"""Settings → Devices: Away mode (a paired phone answers while the person is away) —
on or off, on which address and port, for how long, whether it ends when the person is
back — what listens, in plain words, this desk's certificate and how a phone trusts it,
and the paired devices with Revoke and "Pair a phone…".

The page only shows and asks: its signals go to the Away controller
(`ui/control/away.py`), which calls back `show_status`, `show_devices`, `show_notice`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.config.settings import AwaySettings
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.plain_text import plain_message_box, set_plain, value_label
from qoder_desktop.ui.widgets.away import (
    OFF_TEXT,
    AwayStatus,
    help_page_url,
    local_addresses,
    page_listening_text,
    qr_pixmap,
)

PAGE_HINT = ("Away mode lets a phone you paired answer this desk's requests while you are "
             "away: it serves a small page over HTTPS on one address you choose — your "
             "Wi-Fi, or a VPN such as WireGuard or Tailscale. Only paired phones can "
             "answer, and every answer is signed by the phone's own key.")
NO_ADDRESS_TEXT = "No network address found on this machine"
CHOOSE_TEXT = "Choose the address phones connect to…"
NO_DEVICES_TEXT = "No phone is paired yet."
SETUP_STEPS = (
    "Once, on each phone: open the certificate page below (or scan its code) on the same "
    "network and download desk-ca.crt. Before you trust it, compare the fingerprint the "
    "phone shows with the one above; if they differ, do not install it.\n"
    "• Android: Settings → Security → Encryption & credentials → Install a certificate "
    "→ CA certificate, and pick desk-ca.crt.\n"
    "• iPhone / iPad: allow the profile download, then Settings → General → VPN & Device "
    "Management → install it, then Settings → General → About → Certificate Trust "
    "Settings → turn on full trust for it.\n"
    "The certificate is good only for this desk's private addresses. Then choose \"Pair "
    "a phone…\" and scan its code with the phone.")


FINGERPRINT_BYTES_PER_LINE = 16
"""The fingerprint is shown in lines of this many bytes (one line of 32 would be wider
than the page, and a colon-joined line cannot wrap)."""


def fingerprint_lines(fingerprint: str) -> str:
    """`fingerprint` (``AB:CD:…``) in lines of `FINGERPRINT_BYTES_PER_LINE` bytes, the
    same characters a phone shows, so the person can compare them a line at a time."""
    parts = fingerprint.split(":")
    step = FINGERPRINT_BYTES_PER_LINE
    return "\n".join(":".join(parts[i:i + step]) for i in range(0, len(parts), step))


class DeviceRow(NamedTuple):
    """A paired device as the page lists it.

    Attributes:
        device_id: the registry's id (what Revoke names).
        label: ``Pixel 7 (3f9a1c)``.
        paired: when it was paired, for people.
        last_used: when it last answered or connected, for people ("never").
        revoked: True once revoked (it can no longer answer).
        state: its state in words ("can answer", "revoked 2 May 14:03").
    """

    device_id: str
    label: str
    paired: str
    last_used: str
    revoked: bool
    state: str


class DevicesPage(QWidget):
    """The "Devices" tab of the settings dialog (see the module docstring).

    Signals:
        away_requested(bool): turn Away mode on (with `choice()`) or off.
        pair_requested(): open the pairing dialog.
        revoke_requested(str): revoke this device id (the person confirmed).
        first_shown(): the page was shown for the first time (list the devices then).
    """

    away_requested = Signal(bool)
    pair_requested = Signal()
    revoke_requested = Signal(str)
    first_shown = Signal()

    def __init__(self, settings: AwaySettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("devicesTab")
        self._was_shown = False
        self._rows: list[DeviceRow] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        # (every line wraps to the page's width: nothing hides to the right)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setObjectName("devicesScroll")
        scroll.setAccessibleName("Away mode and devices")
        scroll.setAccessibleDescription("Away mode's settings, a phone's setup and the "
                                        "paired devices")
        holder = QWidget()
        layout = QVBoxLayout(holder)
        scroll.setWidget(holder)
        outer.addWidget(scroll)
        hint = QLabel(PAGE_HINT)
        hint.setWordWrap(True)
        hint.setProperty("role", "hint")
        layout.addWidget(hint)
        layout.addWidget(self._build_away_box(settings))
        layout.addWidget(self._build_setup_box())
        layout.addWidget(self._build_devices_box())
        layout.addStretch(1)

    def _build_away_box(self, settings: AwaySettings) -> QGroupBox:
        box = QGroupBox("Away mode")
        form = QFormLayout(box)
        self.away_check = QCheckBox("&Away mode: paired phones may answer")
        self.away_check.setObjectName("awayCheck")
        self.away_check.setAccessibleDescription("Serve the phone page on the chosen "
                                                 "address; off by default")
        self.away_check.clicked.connect(self._toggled)
        form.addRow(self.away_check)
        self.address_combo = QComboBox()
        self.address_combo.setObjectName("awayAddress")
        self.address_combo.setAccessibleName("Address phones connect to")
        # (a long IPv6 address never widens the page past the window)
        self.address_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.address_combo.setMinimumContentsLength(24)
        self.address_combo.setAccessibleDescription("One of this machine's network "
                                                    "addresses: the Wi-Fi or a VPN")
        self._list_addresses(settings)
        form.addRow("A&ddress:", self.address_combo)
        self.port_spin = QSpinBox()
        self.port_spin.setObjectName("awayPort")
        self.port_spin.setRange(1024, 65534)
        self.port_spin.setValue(settings.port)
        self.port_spin.setToolTip("The phone page's HTTPS port; the certificate page "
                                  "listens on the next one")
        form.addRow("&Port:", self.port_spin)
        self.limit_spin = QDoubleSpinBox()
        self.limit_spin.setObjectName("awayTimeLimit")
        self.limit_spin.setRange(0.25, 72)
        self.limit_spin.setSingleStep(0.5)
        self.limit_spin.setDecimals(2)
        self.limit_spin.setSuffix(" h")
        self.limit_spin.setValue(settings.time_limit_hours)
        self.limit_spin.setToolTip("Away mode turns itself off after this long")
        form.addRow("Turn off a&fter:", self.limit_spin)
        self.back_check = QCheckBox("Turn off when I'm &back at the desk")
        self.back_check.setObjectName("awayOffWhenBack")
        self.back_check.setToolTip("A key or click in Qoder Desktop, an answer given here or "
                                   "a click on the tray icon turns Away mode off")
        self.back_check.setChecked(settings.off_when_back)
        form.addRow(self.back_check)
        self.at_start_check = QCheckBox("T&urn on when Qoder Desktop starts")
        self.at_start_check.setObjectName("awayAtStart")
        self.at_start_check.setChecked(settings.on_at_start)
        self.at_start_check.setAccessibleDescription("Serve the phone page from the start, "
                                                     "on the address chosen last")
        form.addRow(self.at_start_check)
        self.listening_label = value_label("awayListening")
        set_plain(self.listening_label, OFF_TEXT)
        form.addRow(self.listening_label)
        self.refused_label = value_label("awayRefused")
        self.refused_label.setProperty("warning", True)
        self.refused_label.hide()
        form.addRow(self.refused_label)
        self.notice_label = value_label("awayNotice")
        self.notice_label.setProperty("warning", True)
        self.notice_label.hide()
        form.addRow(self.notice_label)
        return box

    def _build_setup_box(self) -> QGroupBox:
        box = QGroupBox("Set up a phone")
        layout = QVBoxLayout(box)
        form = QFormLayout()
        self.fingerprint_label = value_label("deskFingerprint")
        set_plain(self.fingerprint_label, "Shown once Away mode has been on")
        form.addRow("This desk's certificate (SHA-256):", self.fingerprint_label)
        layout.addLayout(form)
        steps = value_label("setupSteps")
        set_plain(steps, SETUP_STEPS)
        layout.addWidget(steps)
        row = QHBoxLayout()
        self.ca_qr_label = QLabel()
        self.ca_qr_label.setObjectName("caQr")
        self.ca_qr_label.setAccessibleName("QR code of the certificate page")
        self.ca_qr_label.hide()
        row.addWidget(self.ca_qr_label)
        self.ca_url_label = value_label("caUrl")
        set_plain(self.ca_url_label, "Turn Away mode on to get the certificate's address.")
        row.addWidget(self.ca_url_label, 1)
        layout.addLayout(row)
        return box

    def _build_devices_box(self) -> QGroupBox:
        box = QGroupBox("Paired devices")
        layout = QVBoxLayout(box)
        self.devices_tree = QTreeWidget()
        self.devices_tree.setObjectName("devicesList")
        self.devices_tree.setAccessibleName("Paired devices")
        self.devices_tree.setAccessibleDescription("Each phone paired with this desk: when, "
                                                   "its last use, whether it can answer")
        self.devices_tree.setHeaderLabels(["Device", "Paired", "Last used", "State"])
        self.devices_tree.setRootIsDecorated(False)
        header = self.devices_tree.header()
        header.setStretchLastSection(True)
        for column in range(3):  # (a device's name is never cut short)
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.devices_tree.setMinimumHeight(110)
        self.devices_tree.currentItemChanged.connect(lambda *_: self._update_buttons())
        layout.addWidget(self.devices_tree)
        self.empty_label = value_label("noDevices")
        self.empty_label.setProperty("role", "hint")
        set_plain(self.empty_label, NO_DEVICES_TEXT)
        layout.addWidget(self.empty_label)
        buttons = QHBoxLayout()
        self.pair_button = QPushButton("Pair a p&hone…")
        self.pair_button.setObjectName("pairPhone")
        self.pair_button.setAccessibleDescription("Show a one-time code for a phone to scan")
        self.pair_button.clicked.connect(self.pair_requested)
        self.revoke_button = QPushButton("&Revoke…")
        self.revoke_button.setObjectName("revokeDevice")
        self.revoke_button.setAccessibleDescription(
            "The selected device can no longer answer (asks first)")
        self.revoke_button.clicked.connect(self.ask_revoke)
        buttons.addWidget(self.pair_button)
        buttons.addStretch(1)
        buttons.addWidget(self.revoke_button)
        layout.addLayout(buttons)
        self._update_buttons()
        return box

    def _list_addresses(self, settings: AwaySettings) -> None:
        combo = self.address_combo
        combo.clear()
        if not settings.host:
            combo.addItem(CHOOSE_TEXT, "")
        for entry in local_addresses(loopback=settings.list_loopback):
            combo.addItem(entry.label, entry.address)
        if settings.host and combo.findData(settings.host) < 0:
            combo.addItem(f"{settings.host} (not on this machine now)", settings.host)
        if combo.findData("") >= 0 and combo.count() == 1:
            combo.setItemText(0, NO_ADDRESS_TEXT)  # (nothing to choose from)
        combo.setCurrentIndex(max(0, combo.findData(settings.host or "")))

    def showEvent(self, event: QShowEvent) -> None:
        """Say `first_shown` the first time the page is shown."""
        super().showEvent(event)
        if not self._was_shown:
            self._was_shown = True
            self.first_shown.emit()

    # -- what the settings dialog reads ----------------------------------------------------

    def chosen_host(self) -> str:
        """The address picked ("" when this machine has none)."""
        return str(self.address_combo.currentData() or "")

    def edited(self, current: AwaySettings) -> dict[str, object]:
        """The page's fields as `AwaySettings` values (`current` keeps the others)."""
        data = current.model_dump()
        data.update(host=self.chosen_host() or None, port=self.port_spin.value(),
                    time_limit_hours=self.limit_spin.value(),
                    off_when_back=self.back_check.isChecked(),
                    on_at_start=self.at_start_check.isChecked())
        return data

    # -- what the controller calls -----------------------------------------------------

    def show_status(self, status: AwayStatus) -> None:
        """Show whether Away mode is on, where it listens and this desk's certificate."""
        self.away_check.setChecked(status.on)
        self.away_check.setEnabled(True)
        for field in (self.address_combo, self.port_spin):
            field.setEnabled(not status.on)
        set_plain(self.listening_label, page_listening_text(status))
        if status.fingerprint:
            set_plain(self.fingerprint_label, fingerprint_lines(status.fingerprint))
        help_page = help_page_url(status)
        if status.on and help_page:
            self.ca_qr_label.setPixmap(qr_pixmap(help_page, scale=3))
            self.ca_qr_label.show()
            set_plain(self.ca_url_label, f"Certificate page (plain HTTP, nothing secret): "
                                         f"{help_page}")
        if status.on:
            self.show_notice("")

    def show_refused(self, lines: Sequence[str]) -> None:
        """The latest answers and sign-ins Away mode refused (a revoked or unknown phone,
        a bad signature), newest last."""
        set_plain(self.refused_label, "\n".join(lines))
        self.refused_label.setVisible(bool(lines))

    def set_busy(self, text: str) -> None:
        """Away mode is being turned on or off: say so; the switch waits."""
        self.away_check.setEnabled(False)
        set_plain(self.listening_label, text)

    def show_notice(self, text: str) -> None:
        """A sentence under the switch (why Away mode could not start, a revoke done)."""
        set_plain(self.notice_label, make_visible(text))
        self.notice_label.setVisible(bool(text))
        self.away_check.setEnabled(True)

    def show_devices(self, rows: Sequence[DeviceRow]) -> None:
        """List the paired devices (revoked ones stay listed, marked)."""
        self._rows = list(rows)
        tree = self.devices_tree
        current = self.selected_device()
        tree.clear()
        for row in rows:
            item = QTreeWidgetItem([make_visible(row.label), row.paired, row.last_used,
                                    row.state])
            item.setData(0, Qt.ItemDataRole.UserRole, row.device_id)
            if row.revoked:  # (listed, but plainly no longer one that answers)
                grey = self.palette().color(QPalette.ColorGroup.Disabled,
                                            QPalette.ColorRole.Text)
                for column in range(4):
                    item.setForeground(column, grey)
            tree.addTopLevelItem(item)
            if row.device_id == current:
                tree.setCurrentItem(item)
        self.empty_label.setVisible(not rows)
        self._update_buttons()

    def device_labels(self) -> list[tuple[str, str]]:
        """(label, state) of each row listed (tests, accessibility)."""
        items = [self.devices_tree.topLevelItem(i)
                 for i in range(self.devices_tree.topLevelItemCount())]
        return [(item.text(0), item.text(3)) for item in items if item is not None]

    # -- what the person does ----------------------------------------------------------

    def selected_device(self) -> str | None:
        """The device id of the selected row."""
        item = self.devices_tree.currentItem()
        return None if item is None else str(item.data(0, Qt.ItemDataRole.UserRole))

    def select_device(self, device_id: str) -> None:
        """Select the row of `device_id`."""
        tree = self.devices_tree
        for index in range(tree.topLevelItemCount()):
            item = tree.topLevelItem(index)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == device_id:
                tree.setCurrentItem(item)

    def ask_revoke(self) -> QMessageBox | None:
        """Ask before revoking the selected device; Revoke sends `revoke_requested`."""
        device_id = self.selected_device()
        row = next((r for r in self._rows if r.device_id == device_id), None)
        if row is None or row.revoked:
            return None
        box = QMessageBox(QMessageBox.Icon.Question, "Revoke device", "", parent=self)
        box.setObjectName("revokeDeviceBox")
        plain_message_box(box, f"Revoke {row.label}? It can no longer answer any request, "
                               "at once; to use it again, pair it again.")
        revoke = box.addButton("Revoke", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(
            lambda button: self.revoke_requested.emit(row.device_id)
            if button is revoke else None)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    def _toggled(self, checked: bool) -> None:
        self.away_check.setChecked(not checked)  # (shown as it is until the controller says)
        self.set_busy("Turning Away mode on…" if checked else "Turning Away mode off…")
        self.away_requested.emit(checked)

    def _update_buttons(self) -> None:
        device_id = self.selected_device()
        row = next((r for r in self._rows if r.device_id == device_id), None)
        self.revoke_button.setEnabled(row is not None and not row.revoked)
