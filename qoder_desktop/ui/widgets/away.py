"""Small pieces of Away mode's views: the machine's addresses (what the person picks
from), the QR code of an address (segno, drawn here: nothing goes over the network),
the status bar's Away line and the sentences that say what listens."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import NamedTuple, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QLabel, QWidget

from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.plain_text import tooltip

OFF_TEXT = "Away mode is off: phones cannot answer."


class AwayStatus(Protocol):
    """What the views read of Away mode's state (`away.mode.AwayStatus` fits; the views
    never import Away mode's core, which loads only when it is used)."""

    @property
    def on(self) -> bool:
        """Whether the phone page is served."""
        ...

    @property
    def url(self) -> str | None:
        """The phone page's address (``https://HOST:PORT``) while on."""
        ...

    @property
    def ca_url(self) -> str | None:
        """The certificate page's address (``http://HOST:PORT+1/``) while on."""
        ...

    @property
    def fingerprint(self) -> str | None:
        """The desk certificate authority's SHA-256 fingerprint (``AB:CD:…``)."""
        ...

    @property
    def phones(self) -> object:
        """The phones connected now (a count or a list of them)."""
        ...

    @property
    def ends_at(self) -> datetime | None:
        """When the time limit turns Away mode off."""
        ...

    @property
    def why_off(self) -> str | None:
        """Why Away mode went off (the time limit, the person back, an error)."""
        ...


def phone_count(status: AwayStatus) -> int:
    """How many phones are connected (the status gives a count or a list)."""
    phones = status.phones
    if isinstance(phones, int):
        return phones
    try:
        return len(phones)  # type: ignore[arg-type]
    except TypeError:
        return 0


class LocalAddress(NamedTuple):
    """One address of this machine a phone could reach, with its interface's name."""

    interface: str
    address: str

    @property
    def label(self) -> str:
        """How the address picker shows it: ``wlan0 — 192.168.1.20``."""
        return f"{self.interface} — {self.address}"


def local_addresses(*, loopback: bool = False) -> list[LocalAddress]:
    """The IPv4 and IPv6 addresses of this machine's running interfaces (loopback only
    when asked: a phone cannot reach it), IPv4 first, each interface's in its order."""
    from PySide6.QtNetwork import QAbstractSocket, QNetworkInterface  # (when a page lists them)

    found: list[LocalAddress] = []
    for interface in QNetworkInterface.allInterfaces():
        flags = interface.flags()
        if not flags & QNetworkInterface.InterfaceFlag.IsUp:
            continue
        is_loopback = bool(flags & QNetworkInterface.InterfaceFlag.IsLoopBack)
        if is_loopback and not loopback:
            continue
        for entry in interface.addressEntries():
            ip = entry.ip()
            if ip.protocol() not in (QAbstractSocket.NetworkLayerProtocol.IPv4Protocol,
                                     QAbstractSocket.NetworkLayerProtocol.IPv6Protocol):
                continue
            text = ip.toString().split("%", 1)[0]  # (a link-local's scope id goes)
            if ip.isLoopback() and not loopback:
                continue
            if ipaddress.ip_address(text).is_link_local:
                continue  # (fe80::…: a browser cannot open it without the scope id)
            found.append(LocalAddress(interface.humanReadableName() or interface.name(), text))
    found.sort(key=lambda entry: ":" in entry.address)
    return found


def url_host(address: str) -> str:
    """`address` as the host part of a URL (an IPv6 literal in brackets)."""
    return f"[{address}]" if ":" in address else address


def qr_pixmap(text: str, scale: int = 6) -> QPixmap:
    """A QR code of `text` (error correction M, a quiet zone of 4), drawn locally."""
    import segno  # (only when a QR code is shown: not at start-up)

    code = segno.make(text, error="m", micro=False)
    import io

    out = io.BytesIO()
    code.save(out, kind="png", scale=scale, border=4)
    pixmap = QPixmap()
    pixmap.loadFromData(out.getvalue(), "PNG")
    return pixmap


def help_page_url(status: AwayStatus) -> str | None:
    """The certificate page's address (``http://HOST:PORT+1/``: the install steps, the
    fingerprint and the certificate), from the status's certificate address."""
    if not status.ca_url:
        return None
    return status.ca_url.removesuffix("desk-ca.crt")


def listening_text(status: AwayStatus) -> str:
    """What listens, in plain words (or why Away mode is off)."""
    if not status.on:
        why = f" ({status.why_off})" if status.why_off else ""
        return f"Away mode is off{why}: phones cannot answer."
    return (f"Phones can answer at {status.url} — only paired devices. "
            f"Certificate download: {help_page_url(status)}")


def page_listening_text(status: AwayStatus) -> str:
    """What listens, for the Devices page (whose "Set up a phone" shows the certificate
    page's address itself, with its QR code)."""
    if not status.on:
        return listening_text(status)
    return f"Phones can answer at {status.url} — only paired devices."


def short_status(status: AwayStatus) -> str:
    """The status bar's and the tray's line: where Away mode listens."""
    if not status.on:
        return ""
    phones = phone_count(status)
    seen = f", {phones} phone{'s' if phones != 1 else ''} connected" if phones else ""
    refused = int(getattr(status, "refused", 0) or 0)
    if refused:
        seen += f", {refused} answer{'s' if refused != 1 else ''} refused"
    return f"Away mode is on at {status.url}{seen}"


class AwayLabel(QLabel):
    """The status bar's Away line: where it listens; hidden while Away mode is off."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("awayStatusLabel")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.hide()

    def show_status(self, status: AwayStatus) -> None:
        """Show where Away mode listens (or nothing when it is off)."""
        line = short_status(status)
        self.setText(make_visible(line))
        self.setToolTip(tooltip(listening_text(status)))
        self.setVisible(bool(line))
