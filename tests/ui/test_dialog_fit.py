"""Every dialog fits a 1366×768 screen, however long what it shows.

A long unwrapped line (a status, a title, a path) makes a dialog as wide as the line;
on a laptop screen its buttons then sit off-screen. Each dialog is shown with long
content: its size and its minimum size must stay within 1366×768 and its preferred
width within 1366 (a preferred height may exceed the screen: long text then scrolls or
shares the space), with every button inside it. Also run on xcb under Xvfb, on a
1366×768 screen, by test_keys_on_xcb.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QApplication,
    QDialog,
    QLabel,
    QScrollArea,
    QWidget,
)

from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.gateway.contract import client_snippets
from qoder_desktop.ui.dialogs import dialog_for
from qoder_desktop.ui.dialogs.approval import HEADER_MAX_HEIGHT
from qoder_desktop.ui.windows.connect_dialog import ConnectAgentDialog
from qoder_desktop.ui.windows.new_session_form import NewSessionDialog
from qoder_desktop.ui.windows.pairing_dialog import PairingDialog
from qoder_desktop.ui.windows.settings_dialog import SettingsDialog

SCREEN_W, SCREEN_H = 1366, 768
WORDS = "a long line of words the agent sent without any line break " * 12
PATH = "/home/someone/" + "/".join(f"folder-number-{i:02d}" for i in range(20)) + "/file.txt"
COMMAND = "npm run build -- --config " + PATH + " && " + " ".join(["--flag=value"] * 40)


def _request(tool: str, tool_input: dict, **fields: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s-1", session_name="a session " * 12,
                           backend=Backend.CLAUDE, tool_name=tool, tool_input=tool_input,
                           cwd=PATH.rsplit("/", 1)[0], **fields)


def _question() -> ApprovalRequest:
    option = {"label": "An option " * 6, "description": WORDS, "preview": "# " + WORDS}
    return _request("AskUserQuestion", {"questions": [
        {"question": f"{i}: {WORDS}?", "header": "Header", "multiSelect": i == 1,
         "options": [option, dict(option, label="Other option " * 5)]} for i in range(4)]})


DIALOGS = {
    "approval (Bash)": lambda: dialog_for(_request(
        "Bash", {"command": COMMAND, "description": WORDS}, title=WORDS, description=WORDS,
        decision_reason=WORDS, blocked_path=PATH, agent_id="agent-" + "x" * 60)),
    "approval (Write)": lambda: dialog_for(_request(
        "Write", {"file_path": PATH, "content": (WORDS + "\n") * 200}, blocked_path=PATH)),
    "question": lambda: dialog_for(_question()),
    "plan": lambda: dialog_for(_request("ExitPlanMode", {"plan": "# " + WORDS + "\n\n" + WORDS})),
    "connect an agent": lambda: ConnectAgentDialog(
        "Approval gateway listening on http://127.0.0.1:48123/mcp. " + WORDS + PATH,
        {"claude_command": "claude --permission-prompt-tool mcp__qoder " + COMMAND,
         "claude_mcp_config": '{"mcpServers": {"qoder-desktop": {"url": "' + PATH + '"}}}',
         "qodercli_command": "qodercli " + COMMAND, "qodercli_mcp_config": "{}"},
        dict),
    "new session": lambda: NewSessionDialog(defaults=SessionOptions(cwd=PATH),
                                            scenarios=["demo", "x" * 80]),
    "settings": lambda: SettingsDialog(Settings()),
    "pair a phone": lambda: _pairing(),
}


def _pairing() -> PairingDialog:
    """The pairing dialog with an offer and a phone's long name waiting."""
    dialog = PairingDialog()
    dialog.show_offer("https://192.168.100.200:8765/#pair=" + "x" * 43,
                      datetime.now(UTC) + timedelta(minutes=5))
    dialog.show_claim("pairing-1", "Pixel " + "x" * 34, "0123 4567")
    return dialog


@pytest.mark.parametrize("name", list(DIALOGS))
def test_the_dialog_fits_a_1366x768_screen_with_long_content(qtbot, name):
    dialog: QDialog = DIALOGS[name]()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    hint, size = dialog.sizeHint(), dialog.size()
    minimum = dialog.minimumSizeHint()
    assert hint.width() <= SCREEN_W, f"size hint {hint}"
    assert size.width() <= SCREEN_W and size.height() <= SCREEN_H, f"size {size}"
    assert minimum.width() <= SCREEN_W and minimum.height() <= SCREEN_H, f"minimum {minimum}"
    buttons = [button for button in dialog.findChildren(QAbstractButton)
               if button.isVisibleTo(dialog) and not _scrolls(button, dialog)]
    assert buttons  # (the person's buttons are never all scrolled away)
    for button in buttons:
        right = button.mapTo(dialog, button.rect().bottomRight())
        assert right.x() <= size.width() and right.y() <= size.height(), button.text()


WITHOUT_WRAPPED_LABELS = frozenset({"new session", "settings"})
"""Dialogs whose wrapped labels all sit in scroll areas (nothing to check there)."""


@pytest.mark.parametrize("name", [name for name in DIALOGS if name not in WITHOUT_WRAPPED_LABELS])
def test_no_wrapped_line_is_squeezed_under_the_next(qtbot, name):
    """Every wrapped label outside a scroll area gets the height its text needs."""
    dialog: QDialog = DIALOGS[name]()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    wrapped = [label for label in dialog.findChildren(QLabel)
               if label.wordWrap() and label.isVisibleTo(dialog) and not _scrolls(label, dialog)]
    assert wrapped  # (else the dialog belongs in WITHOUT_WRAPPED_LABELS)
    for label in wrapped:
        assert label.height() >= label.heightForWidth(label.width()), label.text()[:60]


def test_a_long_approval_header_scrolls_and_a_short_one_takes_its_lines(qtbot, make_request):
    long_dialog = DIALOGS["approval (Bash)"]()
    short_dialog = dialog_for(make_request("Bash", {"command": "ls"}))
    for dialog in (long_dialog, short_dialog):
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
    header: QScrollArea = long_dialog.ui.headerScroll
    assert header.height() == HEADER_MAX_HEIGHT
    assert header.verticalScrollBar().maximum() > 0  # the rest is a scroll away
    QApplication.processEvents()  # (what the first paint shows)
    for label in header.widget().findChildren(QLabel):  # none cut short: all of it scrolls
        if label.isVisibleTo(long_dialog) and label.wordWrap():
            assert label.height() >= label.heightForWidth(label.width()), label.objectName()
    ui = short_dialog.ui
    assert ui.whoLabel.geometry().top() - ui.titleLabel.geometry().bottom() <= 10
    assert ui.headerScroll.verticalScrollBar().maximum() == 0


def _scrolls(widget: QWidget, dialog: QDialog) -> bool:
    """True when `widget` sits in a scroll area of `dialog` (reachable by scrolling)."""
    parent = widget.parentWidget()
    while parent is not None and parent is not dialog:
        if isinstance(parent, QAbstractScrollArea):
            return True
        parent = parent.parentWidget()
    return False


class _NoKeyring:
    usable = False
    backend = "keyring.backends.fail.Keyring"
    message = ("No usable keyring (No OS keyring was found (no Secret Service, KWallet, "
               "Keychain or Vault)).")


def test_settings_keeps_its_width_on_every_tab(qtbot):
    """The longest status texts (no keyring, a hook path) wrap instead of widening the
    dialog when their tab is shown."""
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.set_hook_status("claude", "Claude Code: not installed (" + PATH + ")", False)
    dialog.open()
    qtbot.waitExposed(dialog)
    dialog.set_keyring_status(_NoKeyring())
    width = dialog.width()
    for index in [*range(dialog.ui.tabs.count()), 0]:
        dialog.ui.tabs.setCurrentIndex(index)
        QApplication.processEvents()
        assert dialog.width() == width, dialog.ui.tabs.tabText(index)
        assert dialog.minimumSizeHint().width() <= width, dialog.ui.tabs.tabText(index)


def test_connect_sizes_each_snippet_to_its_text(qtbot):
    """The two-line command is not as tall as the config, and the config does not scroll."""
    url = "http://127.0.0.1:48123/mcp"
    dialog = ConnectAgentDialog("Approval gateway listening on " + url,
                                client_snippets(url), dict)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    QApplication.processEvents()
    command = dialog.snippet_views["claude_command"]
    config = dialog.snippet_views["claude_mcp_config"]
    lines = config.toPlainText().count("\n") + 1
    assert lines >= 8
    assert command.height() < config.height() / 2
    assert command.verticalScrollBar().maximum() == 0
    assert config.verticalScrollBar().maximum() == 0  # all of it shows
    assert dialog.height() <= SCREEN_H
