"""The "Connect an agent" dialog: how to send a terminal agent's approvals here.

Shows the exact command-line flags and MCP config for Claude Code and qodercli. The
snippets shown carry a placeholder; only the Copy buttons put the real token on the
clipboard, so it is never on screen.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

SECTIONS = (
    ("Claude Code", (("Command", "claude_command"), ("MCP config file", "claude_mcp_config"))),
    ("qodercli", (("Command", "qodercli_command"), ("MCP config file", "qodercli_mcp_config"))),
)


class ConnectAgentDialog(QDialog):
    """Shows the gateway's address and the snippets to paste into a terminal agent.

    Signals:
        (none; Copy puts text on the clipboard)
    """

    def __init__(self, status: str, shown: dict[str, str],
                 with_token: Callable[[], dict[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect an agent started elsewhere")
        self.setModal(False)
        self._with_token = with_token
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Agents started in a terminal, a script or an editor can send their permission "
            "prompts to Qoder Desktop. Save the MCP config as "
            f"{shown.get('config_file_name', 'qoder-desktop.json')} and start the agent with "
            "the flags below. Copy inserts your private gateway token.")
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(intro)
        status_label = QLabel(status)
        status_label.setTextFormat(Qt.TextFormat.PlainText)
        status_label.setWordWrap(True)  # a long status must not widen the dialog off-screen
        status_label.setObjectName("gatewayStatus")
        layout.addWidget(status_label)
        tabs = QTabWidget()
        self.snippet_views: dict[str, QPlainTextEdit] = {}
        for title, parts in SECTIONS:
            page = QWidget()
            page_layout = QVBoxLayout(page)
            for caption, key in parts:
                row = QHBoxLayout()
                label = QLabel(caption)
                label.setTextFormat(Qt.TextFormat.PlainText)
                row.addWidget(label)
                row.addStretch(1)
                copy = QPushButton("Copy")
                copy.setObjectName(f"copy_{key}")
                copy.setAccessibleName(f"Copy the {title} {caption.lower()}")
                copy.setAccessibleDescription("Puts it on the clipboard with your private "
                                              "gateway token in it")
                copy.clicked.connect(lambda _checked=False, k=key: self.copy(k))
                row.addWidget(copy)
                page_layout.addLayout(row)
                view = QPlainTextEdit(shown.get(key, ""))
                view.setReadOnly(True)
                view.setFont(QFont("monospace"))
                view.setMaximumHeight(140)
                view.setAccessibleName(f"{title} {caption.lower()}")
                view.setAccessibleDescription("What to paste (the token shows as a "
                                              "placeholder; Copy inserts it)")
                page_layout.addWidget(view)
                self.snippet_views[key] = view
            tabs.setTabToolTip(tabs.addTab(page, title),
                               f"The command and the MCP config for {title}")
        layout.addWidget(tabs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        buttons.button(QDialogButtonBox.StandardButton.Close).setAccessibleDescription(
            "Close these instructions")
        layout.addWidget(buttons)
        self.resize(720, 460)

    def copy(self, key: str) -> str:
        """Put the snippet `key`, with the real token, on the clipboard; returns it."""
        text = self._with_token().get(key, "")
        QGuiApplication.clipboard().setText(text)
        return text
