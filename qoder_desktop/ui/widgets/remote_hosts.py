"""The remote hosts' tunnels in the main window's status bar: ``box: connected · pi:
reconnecting — host unreachable``; its tooltip offers each host's ``RemoteForward`` line
for people who keep their own SSH session."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.plain_text import tooltip


class RemoteHostsLabel(QLabel):
    """One plain-text line of every remote host's tunnel state; hidden with no host."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("remoteHostsLabel")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.hide()

    def set_hosts(self, states: list[str], forward_lines: list[str]) -> None:
        """Show `states` (one per host) and, in the tooltip, the lines to forward the
        hosts' sockets from a person's own SSH session instead of the app's tunnels."""
        self.setText(make_visible(" · ".join(states)))
        tip = "\n".join(states)
        if forward_lines:
            tip += ("\n\nThe app keeps an ssh tunnel to each host. To forward from an SSH "
                    "session of your own instead, put this in its Host entry:\n"
                    + "\n".join(forward_lines))
        self.setToolTip(tooltip(tip))
        self.setVisible(bool(states))
