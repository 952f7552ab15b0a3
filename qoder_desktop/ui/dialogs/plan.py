"""The plan dialog (ExitPlanMode): approve the agent's plan and pick the next mode.

The plan is rendered as markdown in a `PreviewPane` (sanitized; nothing is loaded). The
mode to continue in is one of the modes that still ask before tools run (default,
acceptEdits); a bypass mode is never offered here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.models import ApprovalRequest, Decision, PermissionMode
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.dialogs.approval import who_text
from qoder_desktop.ui.dialogs.base import BaseDecisionDialog
from qoder_desktop.ui.forms.ui_plan_dialog import Ui_PlanDialog
from qoder_desktop.ui.plain_text import set_plain
from qoder_desktop.ui.widgets.preview import PreviewPane
from qoder_desktop.ui.windows import confirm

KEEP_PLANNING = "Keep planning."
CONTINUE_MODES = (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS)
"""The modes a plan may continue in, shown by their `PermissionMode.label`."""


class PlanDialog(BaseDecisionDialog):
    """Approve a plan (and choose the mode to continue in) or keep planning.

    Keys: Ctrl+Return approve; Escape keep planning (with the typed feedback).

    Signals:
        decided(object): allow once with the input unchanged and the chosen mode as its
            `next_mode`, or a deny with feedback.
        shown(): the dialog was shown.
    """

    def __init__(self, request: ApprovalRequest | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_PlanDialog()
        self.ui.setupUi(self)
        self.setWindowTitle("")  # a spare's (unmapped) window is nameless until `load`
        ui = self.ui
        ui.titleLabel.setText("The agent is ready to leave plan mode")
        self.preview = PreviewPane(ui.planContainer)
        ui.planLayout.addWidget(self.preview)
        self.preview.browser.setAccessibleName("Plan")
        self.preview.browser.setAccessibleDescription("The agent's plan, as it wrote it")
        for mode in CONTINUE_MODES:
            ui.modeCombo.addItem(mode.label, mode.value)
        ui.modeCombo.setCurrentIndex(0)

        self.guard(ui.approveButton, self.approve, approves=True)
        self.guard(ui.keepPlanningButton, self.keep_planning)
        self.add_shortcut(["Ctrl+Return", "Ctrl+Enter"], self.approve, approves=True)
        if request is not None:
            self.load(request)

    def _fill(self, request: ApprovalRequest) -> None:
        """Show who asks and the plan."""
        self.setWindowTitle(make_visible(f"Approve plan — {request.session_name}"
                                         if request.session_name else "Approve plan"))
        set_plain(self.ui.whoLabel, who_text(request))
        plan = request.tool_input.get("plan")
        if isinstance(plan, str) and plan.strip():
            self.preview.show_preview(plan, "markdown")
        else:
            self.preview.show_message("(The agent sent no plan text.)")

    def chosen_mode(self) -> PermissionMode:
        """The mode picked in the combo box."""
        return PermissionMode(self.ui.modeCombo.currentData())

    def approve(self, consent: ModeConsent | None = None) -> None:
        """Approve: an allow with the input unchanged, continuing in the chosen mode.

        A mode that lets tools run unapproved (acceptEdits) is confirmed first in the
        confirmation box, whose `ModeConsent` comes back here (`consent`) and goes with
        the decision. Cancelling the box leaves the plan dialog open.
        """
        mode = self.chosen_mode()
        if mode.needs_confirmation and consent is None:
            confirm.confirm_dangerous_mode(self, mode, self._confirmed,
                                           session_id=self.request.session_id)
            return
        self.emit_decision(Decision.allow_once(dict(self.request.tool_input),
                                               next_mode=mode, consent=consent))

    def _confirmed(self, consent: ModeConsent | None) -> None:
        if consent is not None:  # (emit_decision refuses once the request was withdrawn)
            self.approve(consent)

    def keep_planning(self) -> None:
        """Reject the plan with the typed feedback."""
        self.emit_decision(self.escape_decision())

    def escape_decision(self) -> Decision:
        """Escape and closing the window keep planning, with the typed feedback."""
        return Decision.keep_planning(self.ui.feedbackEdit.text().strip() or KEEP_PLANNING)

    def focus_safe_choice(self) -> None:
        """Focus starts on the feedback field."""
        self.ui.feedbackEdit.setFocus(Qt.FocusReason.OtherFocusReason)
