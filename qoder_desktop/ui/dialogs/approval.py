"""The approval dialog: allow a tool call once, for the session, or deny it.

Everything the agent sent is shown as plain text with hidden characters made visible;
the tool input is editable JSON (what runs is what the editor holds); file tools show the
diff against the disk and shell commands the risk lens, both following the edited input.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Slot
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QLabel, QWidget

from qoder_desktop.domain.models import ApprovalRequest, Decision
from qoder_desktop.domain.tools import BASH_TOOL, DIFF_TOOLS
from qoder_desktop.rules.offer import ANALYSIS_LIMIT, analysed_size
from qoder_desktop.text.visible import hidden_in_request_texts, hidden_in_value, make_visible
from qoder_desktop.ui.dialogs.base import BaseDecisionDialog
from qoder_desktop.ui.dialogs.inspect_views import DiffPanel, RiskLensView
from qoder_desktop.ui.dialogs.session_grants import SessionGrants
from qoder_desktop.ui.forms.ui_approval_dialog import Ui_ApprovalDialog
from qoder_desktop.ui.plain_text import set_plain
from qoder_desktop.ui.summaries import covered_note
from qoder_desktop.ui.widgets.json_editor import JsonEditor

DEFAULT_DENY = "The user denied this tool call."
DEFAULT_DENY_STOP = "The user denied this tool call and stopped the agent."
HEADER_MAX_HEIGHT = 180
"""The most the title, who and info lines take; longer model text scrolls there."""


def _make_plain(label: QLabel) -> None:
    """A label for model text: plain text only, selectable by mouse."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)


def approval_title(request: ApprovalRequest) -> str:
    """The window title: `Approve {label} — {session_name}`."""
    title = f"Approve {request.label}"
    if request.session_name:
        title += f" — {request.session_name}"
    return make_visible(title).replace("\n", " ")


def who_text(request: ApprovalRequest) -> str:
    """Who asks: the remote host (if any), the session and, for a sub-agent, its id."""
    session = request.session_name or request.session_id
    agent = f"sub-agent {request.agent_id}" if request.agent_id else "main agent"
    host = f"Host: {request.host}  ·  " if request.host else ""
    return f"{host}Session: {session}  ·  {agent}  ·  {request.backend.value}"


def reason_text(request: ApprovalRequest) -> str | None:
    """The CLI's reason for asking, and the session rule that covers the call if any.

    A call reaching us although a rule covers it was escalated by the agent on purpose
    (the agent holds the grant), or was asked before the person granted the rule: the
    person is told which, and that they decide (`summaries.covered_note`).
    """
    note = covered_note(request)
    if note is None:
        return request.decision_reason
    return f"{request.decision_reason}\n{note}" if request.decision_reason else note


class ApprovalDialog(BaseDecisionDialog):
    """Approve, narrow, edit or deny one tool call.

    Keys: Ctrl+Return allow once; Ctrl+Shift+Return allow for this session; Escape deny
    with the typed reason; Ctrl+E focus the JSON editor. Focus starts on the deny reason.

    Signals:
        decided(object): the `models.Decision` (allow once / for the session / deny).
        shown(): the dialog was shown.
    """

    STORE_AHEAD = True  # the dialog most requests open: its first frame paints at once

    def __init__(self, request: ApprovalRequest | None = None,
                 parent: QWidget | None = None, *, staged: bool = False) -> None:
        """With `staged` (a spare built while the loop is idle), the JSON editor, the
        inspection views and the session-grant section are built by `build_step()`
        calls, each its own loop turn (and all at once by `load()` if any is left)."""
        super().__init__(parent)
        self.ui = Ui_ApprovalDialog()
        self.ui.setupUi(self)
        self.setWindowTitle("")  # a spare's (unmapped) window is nameless until `load`
        ui = self.ui
        self._inspect_timer = QTimer(self)
        self._inspect_timer.setSingleShot(True)
        self._inspect_timer.setInterval(150)
        self._inspect_timer.timeout.connect(self._refresh_inspection)
        self._large = False
        self._header_fitted_for = -1
        """The header's width when it was last fitted (-1: fit again)."""
        for label in (ui.titleLabel, ui.whoLabel, ui.descriptionLabel, ui.reasonLabel,
                      ui.blockedLabel, ui.hiddenWarning):
            _make_plain(label)
        ui.hiddenWarning.hide()

        # (the editor and the grants exist before the dialog is armed and asks them)
        self.guard(ui.allowOnceButton, self.allow_once, lambda: self.json_editor.is_valid(),
                   approves=True)
        self.guard(ui.allowSessionButton, self.allow_session,
                   lambda: self.json_editor.is_valid() and self.grants.is_valid(),
                   approves=True)
        self.guard(ui.denyButton, self.deny)
        self.guard(ui.denyStopButton, self.deny_and_stop)
        self.add_shortcut(["Ctrl+Return", "Ctrl+Enter"], self.allow_once, approves=True)
        self.add_shortcut(["Ctrl+Shift+Return", "Ctrl+Shift+Enter"], self.allow_session,
                          approves=True)
        self.add_shortcut(["Ctrl+E"], self.focus_json_editor, armed=False)
        ui.allowSessionButton.setToolTip("")
        for tab, tip in ((ui.inspectTab, "What the request does, and what to look at"),
                         (ui.inputTab, "The tool's input as JSON; what you allow runs as "
                                       "edited here (Ctrl+E)")):
            ui.detailTabs.setTabToolTip(ui.detailTabs.indexOf(tab), tip)
        self.build_later([self._build_editor, self._build_inspection, self._build_grants])
        if not staged:
            self.finish_building()
        if request is not None:
            self.load(request)

    def _build_editor(self) -> None:
        self.json_editor = JsonEditor(self)
        self.ui.inputLayout.addWidget(self.json_editor)

    def _build_inspection(self) -> None:
        # Both inspection views are built, so one spare fits every tool; `_fill` keeps
        # the one the tool needs (or none) and drops the other.
        self.risk_lens: RiskLensView | None = RiskLensView(self)
        self.diff_panel: DiffPanel | None = DiffPanel(self)
        self.ui.inspectLayout.addWidget(self.risk_lens)
        self.ui.inspectLayout.addWidget(self.diff_panel)

    def _build_grants(self) -> None:
        self.grants = SessionGrants(None, self)
        self.ui.sessionLayout.addWidget(self.grants)
        self.setTabOrder(self.ui.denyReasonEdit, self.ui.denyButton)

    def _fill(self, request: ApprovalRequest) -> None:
        """Show the whole request: header, JSON input, inspection, session grant."""
        ui = self.ui
        self._header_fitted_for = -1
        self.setWindowTitle(approval_title(request))
        set_plain(ui.titleLabel, request.title or f"Allow {request.label}?")
        set_plain(ui.whoLabel, who_text(request))
        for row, (label, text) in enumerate((
                (ui.descriptionLabel, request.description),
                (ui.reasonLabel, reason_text(request)),
                (ui.blockedLabel, request.blocked_path))):
            set_plain(label, text)
            ui.infoForm.setRowVisible(row, bool(text))

        if request.tool_name == BASH_TOOL:
            self._drop_diff_panel()
            ui.detailTabs.setTabText(0, "Command")
        elif request.tool_name in DIFF_TOOLS:
            self._drop_risk_lens()
            ui.detailTabs.setTabText(0, "Changes")
        else:
            self._drop_risk_lens()
            self._drop_diff_panel()
            ui.detailTabs.removeTab(0)
        # A spare's first frame shows the command or the changes, not the JSON editor: its
        # text is written after that frame (the value counts from now; `JsonEditor`).
        later = self.is_laid_out() and ui.detailTabs.currentWidget() is not ui.inputTab
        self.json_editor.set_value(dict(request.tool_input), text_later=later)
        if later:
            self.when_painted(self._write_editor_text)
        # A command too large to analyse: the lens and the hidden-character warning
        # follow a loop turn later, so opening and editing are no one long block.
        self._large = (self.risk_lens is not None and analysed_size(
            request.tool_name, request.tool_input) > ANALYSIS_LIMIT)
        original = dict(request.tool_input)  # what the editor holds now, unparsed
        if self._large:
            self._inspect_timer.start()
        else:
            self._refresh_inspection(original)

        self.grants.load(request)
        self._update_hidden_warning(original)
        self.json_editor.validity_changed.connect(self._on_validity_changed)
        self.json_editor.value_changed.connect(self._on_input_changed)
        self.grants.validity_changed.connect(self.refresh_buttons)
        self.refresh_buttons()
        if self.is_laid_out():  # (a spare: the header's width is known; showing keeps it)
            self._fit_header()

    def _refill(self, request: ApprovalRequest) -> None:
        """The request changed while shown (a new rule covers it): say so."""
        set_plain(self.ui.reasonLabel, reason_text(request))
        self.ui.infoForm.setRowVisible(1, bool(reason_text(request)))
        self._header_fitted_for = -1
        self._fit_header()

    def content_complete(self) -> bool:
        """True once the risk lens shows the whole command with its findings."""
        return self.risk_lens is None or self.risk_lens.is_complete()

    def _write_editor_text(self) -> None:
        if not self.is_finished():
            self.json_editor.write_text()

    def _drop_risk_lens(self) -> None:
        if self.risk_lens is not None:
            self.risk_lens.hide()  # (deleted after the first frame, no part of it)
            self.when_painted(self.risk_lens.deleteLater)
            self.risk_lens = None

    def _drop_diff_panel(self) -> None:
        if self.diff_panel is not None:
            self.diff_panel.hide()  # (deleted after the first frame, no part of it)
            self.when_painted(self.diff_panel.deleteLater)
            self.diff_panel = None

    # -- actions ---------------------------------------------------------------------
    def allow_once(self) -> None:
        """Allow this call with the (possibly edited) input."""
        value = self.json_editor.value()
        if value is not None:
            self.emit_decision(Decision.allow_once(value))

    def allow_session(self) -> None:
        """Allow this call and grant the (possibly narrowed) rules for the session."""
        value = self.json_editor.value()
        updates = self.grants.updates()
        if value is not None and updates:
            self.emit_decision(Decision.allow_session(value, updates))

    def deny(self) -> None:
        """Deny with the typed reason (or a default one)."""
        self.emit_decision(self.escape_decision())

    def deny_and_stop(self) -> None:
        """Deny and tell the agent to stop."""
        reason = self.ui.denyReasonEdit.text().strip() or DEFAULT_DENY_STOP
        self.emit_decision(Decision.deny(reason, interrupt=True))

    def escape_decision(self) -> Decision:
        """Escape and closing the window deny with the typed reason."""
        return Decision.deny(self.ui.denyReasonEdit.text().strip() or DEFAULT_DENY)

    def focus_json_editor(self) -> None:
        """Show the input tab and put the cursor in the JSON editor (Ctrl+E)."""
        self.ui.detailTabs.setCurrentWidget(self.ui.inputTab)
        self.json_editor.focus_editor()

    def focus_safe_choice(self) -> None:
        """Focus starts on the deny reason field, never on an allow button."""
        self.ui.denyReasonEdit.setFocus(Qt.FocusReason.OtherFocusReason)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Give the header the height its wrapped text needs, up to `HEADER_MAX_HEIGHT`."""
        super().resizeEvent(event)
        self._fit_header()

    def changeEvent(self, event: QEvent) -> None:
        """A new font or style changes the header's height: fit it again."""
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._header_fitted_for = -1
        super().changeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        """Fit the header to the laid-out width before the dialog first paints."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        # (the header's own layout kept heights its labels had before the dialog showed:
        # a long title was painted cut short until the dialog was resized)
        self.ui.headerLayout.invalidate()
        self._fit_header()
        super().showEvent(event)

    # -- internals -------------------------------------------------------------------
    def _fit_header(self) -> None:
        scroll, layout = self.ui.headerScroll, self.ui.headerLayout
        width = scroll.viewport().width()
        if width == self._header_fitted_for:
            return  # same texts, same width: the same height (showing asks twice)
        self._header_fitted_for = width
        needed = (layout.totalHeightForWidth(width) if layout.hasHeightForWidth()
                  else layout.sizeHint().height())
        scroll.setFixedHeight(min(needed, HEADER_MAX_HEIGHT))

    def _current_input(self) -> dict[str, Any]:
        value = self.json_editor.value()
        return value if value is not None else dict(self.request.tool_input)

    @Slot(bool)
    def _on_validity_changed(self, valid: bool) -> None:
        tab = self.ui.detailTabs.indexOf(self.ui.inputTab)
        self.ui.detailTabs.setTabText(tab, "Input (JSON) — Ctrl+E" if valid
                                      else "Input (JSON) ⚠ invalid")
        self.refresh_buttons()

    @Slot(object)
    def _on_input_changed(self, value: object) -> None:
        self.grants.follow_input(value if isinstance(value, dict) else None)
        if not self._large:  # (a large input's warning follows with the inspection)
            self._update_hidden_warning()
        self._inspect_timer.start()

    def _refresh_inspection(self, tool_input: dict[str, Any] | None = None) -> None:
        if tool_input is None and self._large and self.json_editor.is_checking():
            return  # (its value_changed brings the inspection back; no 4 MiB read now)
        if self._large:
            self._update_hidden_warning()
        if tool_input is None:
            tool_input = self._current_input()
        if self.risk_lens is not None:
            command = tool_input.get("command")
            description = tool_input.get("description")
            self.risk_lens.show_command(
                command if isinstance(command, str) else "", self.request.cwd,
                description=description if isinstance(description, str) else None)
        if self.diff_panel is not None:
            self.diff_panel.show_diff(self.request.tool_name, tool_input, self.request.cwd)

    def _update_hidden_warning(self, tool_input: dict[str, Any] | None = None) -> None:
        request = self.request
        names = hidden_in_value(self._current_input() if tool_input is None else tool_input)
        names += [n for n in hidden_in_request_texts(request) if n not in names]
        label = self.ui.hiddenWarning
        label.setText("⚠ This request contains hidden or control characters: "
                      + ", ".join(names) + ". They are shown as ⟨…⟩ markers (and as "
                      "\\uXXXX escapes in the JSON)." if names else "")
        label.setVisible(bool(names))
