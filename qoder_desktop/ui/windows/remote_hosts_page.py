"""Settings → Remote hosts: the hosts ``qoder-desktop remote add`` deployed to, each as
a card (reachable or why not, python3, the agents found, the hook and its version, the
tunnel, and the ``RemoteForward`` line for people who keep their own SSH session), with
Add…, Check and Remove….

The page only shows and asks: its signals go to a controller, which runs ``ssh`` off
the GUI thread and calls back `show_hosts`, `show_check`, `set_add_progress`, …
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.plain_text import set_plain, tooltip, value_label
from qoder_desktop.ui.windows.remote_host_dialogs import AddHostDialog, confirm_remove

if TYPE_CHECKING:  # the remote package loads when the controller first needs it
    from qoder_desktop.remote.overview import HostCheck

CHECKING_TEXT = "Checking…"
EMPTY_TEXT = ("No remote hosts yet. Add one to get the permission prompts of agents you "
              "run on it over SSH (in a terminal, tmux or an editor) here too.")
FORWARD_HINT = ("For an SSH session you keep open yourself (a terminal, VS Code Remote, "
                "mosh + tmux): put this line in the host's Host entry in ~/.ssh/config.")
PAGE_HINT = ("Agents on other machines ask here too: Qoder Desktop puts a small hook on "
             "the host with your own ssh, and keeps a tunnel to it while the app runs. "
             "Add… and Remove… act at once.")


class HostRow(NamedTuple):
    """What the page lists for a host before a check says more.

    Attributes:
        name: the SSH destination as the person typed it.
        python: the python3 the last add found there.
        hook: what the last add installed, for people.
        forward: the ``RemoteForward`` line for the person's own SSH session.
        in_use: which way in is active (the app's tunnel, their own session, neither).
        tunnel: how its tunnel stands ("": not known before a check).
    """

    name: str
    python: str
    hook: str
    forward: str
    in_use: str
    tunnel: str = ""


class HostCard(QGroupBox):
    """One host: what its last check found, its forward line, Check and Remove…."""

    def __init__(self, name: str, page: RemoteHostsPage) -> None:
        super().__init__(make_visible(name))
        self.name = name
        self._page = page
        self.setObjectName("remoteHostCard")
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.state_label = value_label("hostState")
        top.addWidget(self.state_label, 1)
        self.check_button = QPushButton("Check")
        self.check_button.setObjectName("checkHostButton")
        self.check_button.setAccessibleName(f"Check {make_visible(name)}")
        self.check_button.setAccessibleDescription("Connect again and see how the host stands")
        self.check_button.clicked.connect(self._check)
        self.remove_button = QPushButton("Remove…")
        self.remove_button.setObjectName("removeHostButton")
        self.remove_button.setAccessibleName(f"Remove {make_visible(name)}")
        self.remove_button.setAccessibleDescription(
            "Take our hook off the host and forget it here (asks first)")
        self.remove_button.clicked.connect(lambda: page.ask_remove(self.name))
        top.addWidget(self.check_button)
        top.addWidget(self.remove_button)
        layout.addLayout(top)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.reachable_label = value_label("hostReachable")
        self.python_label = value_label("hostPython")
        self.agents_label = value_label("hostAgents")
        self.hook_label = value_label("hostHook")
        self.tunnel_label = value_label("hostTunnel")
        form.addRow("Reachable:", self.reachable_label)
        form.addRow("Python:", self.python_label)
        form.addRow("Agents:", self.agents_label)
        form.addRow("Hook:", self.hook_label)
        form.addRow("Tunnel:", self.tunnel_label)
        forward = QHBoxLayout()
        self.forward_edit = QLineEdit()
        self.forward_edit.setObjectName("forwardLine")
        self.forward_edit.setReadOnly(True)
        self.forward_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.forward_edit.setAccessibleName("RemoteForward line for your own SSH session")
        self.forward_edit.setToolTip(FORWARD_HINT)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName("copyForwardLine")
        self.copy_button.setAccessibleName(f"Copy the RemoteForward line of "
                                           f"{make_visible(name)}")
        self.copy_button.setAccessibleDescription("Put the line on the clipboard")
        self.copy_button.clicked.connect(self._copy)
        forward.addWidget(self.forward_edit, 1)
        forward.addWidget(self.copy_button)
        self.in_use_label = value_label("forwardInUse")
        self.in_use_label.setProperty("role", "hint")
        own = QVBoxLayout()
        own.setSpacing(2)
        own.addLayout(forward)
        own.addWidget(self.in_use_label)
        form.addRow("Own session:", own)
        layout.addLayout(form)

    def show_known(self, row: HostRow) -> None:
        """What this desk remembers of the host and its ways in (before a check)."""
        set_plain(self.python_label, make_visible(row.python) or "—")
        set_plain(self.hook_label, make_visible(row.hook))
        set_plain(self.agents_label, "—")
        self.forward_edit.setText(row.forward)
        self.forward_edit.setCursorPosition(0)
        self.forward_edit.setToolTip(tooltip(f"{row.forward}\n\n{FORWARD_HINT}"))
        self.show_tunnel(row.tunnel, row.in_use)

    def show_tunnel(self, line: str, in_use: str) -> None:
        """How the host's tunnel stands now, and which way in is in use."""
        if line:
            set_plain(self.tunnel_label, make_visible(line))
        set_plain(self.in_use_label, in_use)

    def set_busy(self, text: str) -> None:
        """A check or a remove runs: say which; Check and Remove wait for it."""
        self._set_state(text, "busy")
        if text == CHECKING_TEXT:
            set_plain(self.reachable_label, CHECKING_TEXT)
        self.check_button.setEnabled(False)
        self.remove_button.setEnabled(False)

    def set_idle(self) -> None:
        """Nothing runs for this host: Check and Remove can be pressed."""
        self.check_button.setEnabled(True)
        self.remove_button.setEnabled(True)

    def show_check(self, check: HostCheck) -> None:
        """Fill the card from a finished check."""
        self.set_idle()
        if not check.reachable:
            set_plain(self.reachable_label, make_visible(f"no — {check.problem}"))
        elif check.problem:
            set_plain(self.reachable_label, make_visible(f"yes, but {check.problem}"))
        else:
            set_plain(self.reachable_label, "yes")
        if check.found is not None:  # else what the last add found stays
            set_plain(self.python_label, make_visible(check.python) or "—")
            set_plain(self.agents_label, make_visible(check.agents_found) or "—")
        if check.answer is not None:
            set_plain(self.hook_label, make_visible(check.hook))
        set_plain(self.tunnel_label, make_visible(check.tunnel))
        set_plain(self.in_use_label, check.in_use)
        if check.ok:
            self._set_state("Ready: its agents ask here while the app runs.", "ok")
        elif not check.reachable:
            self._set_state("Not reachable", "problem")
        else:
            self._set_state("Needs attention", "problem")

    def show_problem(self, lines: Sequence[str]) -> None:
        """An action on this host failed: say why."""
        self.set_idle()
        self._set_state(make_visible("\n".join(lines)), "problem")

    def _set_state(self, text: str, state: str) -> None:
        set_plain(self.state_label, text)
        self.state_label.setProperty("state", state)
        self.state_label.style().unpolish(self.state_label)
        self.state_label.style().polish(self.state_label)

    def state_text(self) -> str:
        """The line at the top of the card."""
        return self.state_label.text()

    def _check(self) -> None:
        self.set_busy(CHECKING_TEXT)
        self._page.check_requested.emit(self.name)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.forward_edit.text())
        self.copy_button.setText("Copied")
        QTimer.singleShot(1500, self, lambda: self.copy_button.setText("Copy"))


class RemoteHostsPage(QWidget):
    """The "Remote hosts" tab of the settings dialog (see the module docstring).

    Signals:
        add_requested(str, str): add this SSH destination, with this OpenSSH config file
            ("": the person's own).
        remove_requested(str, bool): take the hook off this host and forget it; with
            True, forget it here even when it cannot be reached.
        check_requested(str): check this host again.
        first_shown(): the page was shown for the first time (list and check the hosts
            then, not before: no ssh runs unless the person looks at the page).
    """

    add_requested = Signal(str, str)
    remove_requested = Signal(str, bool)
    check_requested = Signal(str)
    first_shown = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("remoteHostsTab")
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        hint = QLabel(PAGE_HINT)
        hint.setWordWrap(True)
        hint.setProperty("role", "hint")
        top.addWidget(hint, 1)
        self.add_button = QPushButton("&Add…")
        self.add_button.setObjectName("addRemoteHost")
        self.add_button.setAccessibleName("Add a remote host")
        self.add_button.setAccessibleDescription(
            "Check a host over SSH and put the hook there")
        self.add_button.clicked.connect(self.open_add_dialog)
        top.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        self.notice_label = value_label("remoteHostsNotice")
        self.notice_label.hide()
        layout.addWidget(self.notice_label)
        scroll = QScrollArea()
        scroll.setObjectName("remoteHostsScroll")
        scroll.setAccessibleName("Hosts on this desk")
        scroll.setAccessibleDescription("Each host this desk sends prompts from, and how it "
                                        "stands")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        holder = QWidget()
        self._cards_layout = QVBoxLayout(holder)
        self._cards_layout.setContentsMargins(0, 0, 0, 0)
        self.empty_label = value_label("noRemoteHosts")
        self.empty_label.setProperty("role", "hint")
        set_plain(self.empty_label, EMPTY_TEXT)
        self.empty_label.hide()  # until the list was read
        self._cards_layout.addWidget(self.empty_label)
        self._cards_layout.addStretch(1)
        scroll.setWidget(holder)
        layout.addWidget(scroll, 1)
        self.cards: dict[str, HostCard] = {}
        self.add_dialog: AddHostDialog | None = None
        self._was_shown = False

    def showEvent(self, event: QShowEvent) -> None:
        """Say `first_shown` the first time the page is shown."""
        super().showEvent(event)
        if not self._was_shown:
            self._was_shown = True
            self.first_shown.emit()

    # -- what the controller calls ---------------------------------------------------

    def show_hosts(self, rows: Sequence[HostRow]) -> None:
        """List the hosts this desk remembers; each shows "Checking…" until
        `show_check`."""
        names = [row.name for row in rows]
        for name in list(self.cards):
            if name not in names:
                card = self.cards.pop(name)
                self._cards_layout.removeWidget(card)
                card.deleteLater()
        for index, row in enumerate(rows):
            card = self.cards.get(row.name) or HostCard(row.name, self)
            self.cards[row.name] = card
            self._cards_layout.insertWidget(index, card)
            card.show_known(row)
            card.set_busy(CHECKING_TEXT)
        self.empty_label.setVisible(not rows)

    def show_check(self, check: HostCheck) -> None:
        """Show what a check of one host found."""
        card = self.cards.get(check.host.name)
        if card is not None:
            card.show_check(check)

    def show_tunnel(self, name: str, line: str, in_use: str) -> None:
        """Host `name`'s tunnel changed: its card shows `line` and `in_use`."""
        card = self.cards.get(name)
        if card is not None:
            card.show_tunnel(line, in_use)

    def set_host_busy(self, name: str, text: str) -> None:
        """Something runs for host `name` (``Checking…``, ``Taking the hook off box…``)."""
        card = self.cards.get(name)
        if card is not None:
            card.set_busy(text)

    def host_failed(self, name: str, lines: Sequence[str]) -> None:
        """Something for host `name` failed: its card says why."""
        card = self.cards.get(name)
        if card is not None:
            card.show_problem(lines)

    def remove_failed(self, name: str, lines: Sequence[str], can_forget: bool) -> None:
        """A remove did not finish: show why and, when `can_forget`, offer to forget the
        host here anyway."""
        card = self.cards.get(name)
        if card is not None:
            card.show_problem(lines)
        if can_forget:
            confirm_remove(self, name, lambda: self.remove_requested.emit(name, True),
                           forget_reason="\n".join(lines))

    def set_add_progress(self, step: str) -> None:
        """The open add dialog shows the step its add is at."""
        if self.add_dialog is not None:
            self.add_dialog.set_progress(step)

    def add_finished(self, ok: bool, lines: Sequence[str]) -> None:
        """An add ended: the dialog closes when it worked, or says why it did not; the
        page says what was done."""
        dialog = self.add_dialog
        if dialog is not None:
            dialog.finish(ok, lines)
        if ok or dialog is None:
            self.show_notice("\n".join(lines))

    def show_notice(self, text: str) -> None:
        """A sentence above the hosts (the last action, or why the list cannot be read)."""
        set_plain(self.notice_label, make_visible(text))
        self.notice_label.setVisible(bool(text))

    # -- what the person does ----------------------------------------------------------

    def open_add_dialog(self) -> AddHostDialog:
        """Open the add dialog (or raise the open one)."""
        if self.add_dialog is not None:
            self.add_dialog.raise_()
            return self.add_dialog
        dialog = AddHostDialog(self)
        dialog.add_requested.connect(self.add_requested)
        dialog.finished.connect(lambda _code: self._add_dialog_closed(dialog))
        self.add_dialog = dialog
        dialog.open()
        return dialog

    def _add_dialog_closed(self, dialog: AddHostDialog) -> None:
        if self.add_dialog is dialog:
            self.add_dialog = None
        dialog.deleteLater()

    def ask_remove(self, name: str) -> None:
        """Ask before removing host `name`; a yes sends `remove_requested`."""
        confirm_remove(self, name, lambda: self.remove_requested.emit(name, False))
