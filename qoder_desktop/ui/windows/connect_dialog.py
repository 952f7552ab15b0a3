"""The "Connect an agent" dialog: how to send a terminal agent's approvals here.

Shows the exact command-line flags and MCP config for Claude Code and qodercli. The
snippets shown carry a placeholder; only the Copy buttons put the real token on the
clipboard, so it is never on screen.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

SECTIONS = (
    ("Claude Code", (("Command", "claude_command"), ("MCP config file", "claude_mcp_config"))),
    ("qodercli", (("Command", "qodercli_command"), ("MCP config file", "qodercli_mcp_config"))),
)


class SnippetView(QPlainTextEdit):
    """A read-only snippet as tall as its (wrapped) text, `MIN_LINES` to `MAX_LINES` lines:
    a two-line command takes two lines, a twelve-line config twelve, without scrolling."""

    MIN_LINES = 2
    MAX_LINES = 16

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setReadOnly(True)
        self.setFont(QFont("monospace"))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self._lines = 0

    def wrapped_lines(self) -> int:
        """How many lines the text takes at the view's width (an estimate before it shows)."""
        width = self.viewport().width() if self.isVisible() else 660
        metrics = self.fontMetrics()
        usable = max(1, width - 2 * int(self.document().documentMargin()))
        return sum(max(1, math.ceil(metrics.horizontalAdvance(line) / usable))
                   for line in self.toPlainText().split("\n"))

    def _height_for(self, lines: int) -> int:
        margins = self.contentsMargins()
        return (lines * self.fontMetrics().lineSpacing()
                + 2 * int(self.document().documentMargin()) + margins.top()
                + margins.bottom() + 2)

    def sizeHint(self) -> QSize:
        """As tall as the text, within `MIN_LINES` and `MAX_LINES` lines."""
        lines = min(self.MAX_LINES, max(self.MIN_LINES, self.wrapped_lines()))
        return QSize(super().sizeHint().width(), self._height_for(lines))

    def minimumSizeHint(self) -> QSize:
        """`MIN_LINES` lines (a longer text then scrolls)."""
        return QSize(super().minimumSizeHint().width(), self._height_for(self.MIN_LINES))

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A new width can wrap the text into more or fewer lines: ask for a new height."""
        super().resizeEvent(event)
        lines = self.wrapped_lines()
        if lines != self._lines:
            self._lines = lines
            self.updateGeometry()


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
        self.snippet_views: dict[str, SnippetView] = {}
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
                view = SnippetView(shown.get(key, ""))
                view.setAccessibleName(f"{title} {caption.lower()}")
                view.setAccessibleDescription("What to paste (the token shows as a "
                                              "placeholder; Copy inserts it)")
                page_layout.addWidget(view)
                self.snippet_views[key] = view
            page_layout.addStretch(1)
            tabs.setTabToolTip(tabs.addTab(page, title),
                               f"The command and the MCP config for {title}")
        layout.addWidget(tabs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        buttons.button(QDialogButtonBox.StandardButton.Close).setAccessibleDescription(
            "Close these instructions")
        layout.addWidget(buttons)
        self.resize(760, self.sizeHint().height())

    def copy(self, key: str) -> str:
        """Put the snippet `key`, with the real token, on the clipboard; returns it."""
        text = self._with_token().get(key, "")
        QGuiApplication.clipboard().setText(text)
        return text
