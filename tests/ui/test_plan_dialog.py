"""The plan dialog (ExitPlanMode), driven by real key presses and clicks (offscreen)."""

from __future__ import annotations

import pytest
from helpers.keys import press
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.models import DecisionKind, PermissionMode
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.ui.dialogs import PlanDialog, dialog_for
from qoder_desktop.ui.dialogs.plan import KEEP_PLANNING
from qoder_desktop.ui.summaries import request_summary
from qoder_desktop.ui.widgets.transcript_view import TranscriptView

CTRL = Qt.KeyboardModifier.ControlModifier
PLAN = "# Plan\n\n1. Add a **settings** page\n2. Write tests\n\n![diagram](/etc/passwd)\n"


@pytest.fixture
def plan(make_request):
    def build(text: object = PLAN):
        return make_request("ExitPlanMode", {"plan": text}, session_name="design")
    return build


def test_title_plan_and_modes(open_dialog, plan):
    dialog, _ = open_dialog(PlanDialog(plan()))
    assert dialog.windowTitle() == "Approve plan — design"
    text = dialog.preview.browser.toPlainText()
    assert "Add a settings page" in text and "[image: diagram]" in text
    assert dialog.preview.browser.last_preview.kind == "markdown"
    modes = [dialog.ui.modeCombo.itemData(i) for i in range(dialog.ui.modeCombo.count())]
    assert modes == ["default", "acceptEdits"]
    for label in dialog.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()


def test_an_unclosed_image_cannot_hide_the_rest_of_the_plan(open_dialog, plan):
    dialog, _ = open_dialog(PlanDialog(plan("# Plan\n\nStep 1: tidy up ![x](\n\n"
                                            "Step 2: rm -rf ~\n")))
    shown = dialog.preview.browser.toPlainText()
    assert "Step 1: tidy up" in shown and "Step 2: rm -rf ~" in shown
    assert dialog.preview.banner.text().endswith("Not shown: images.")


def test_focus_starts_on_feedback(open_dialog, plan):
    dialog, _ = open_dialog(PlanDialog(plan()))
    assert QApplication.focusWidget() is dialog.ui.feedbackEdit


def _confirm_box(qtbot, dialog) -> QMessageBox:
    def open_box() -> QMessageBox | None:
        box = dialog.findChild(QMessageBox, "confirmDangerousMode")
        return box if box is not None and box.isVisible() else None

    qtbot.waitUntil(lambda: open_box() is not None)
    box = open_box()
    assert box is not None
    return box


def test_approve_in_default_mode_carries_it_in_its_one_decision(open_dialog, plan):
    dialog, decisions = open_dialog(PlanDialog(plan()))
    press(dialog, Qt.Key.Key_Return, CTRL)
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert [(d.kind, d.next_mode, d.consent) for d in decisions] == [
        (DecisionKind.ALLOW_ONCE, PermissionMode.DEFAULT, None)]
    assert decisions[0].final_input == {"plan": PLAN}


def test_accept_edits_is_confirmed_first_and_its_consent_goes_with_the_decision(
        open_dialog, qtbot, plan):
    request = plan()
    dialog, decisions = open_dialog(PlanDialog(request))
    dialog.ui.modeCombo.setFocus()
    press(dialog.ui.modeCombo, Qt.Key.Key_Down)
    assert dialog.chosen_mode() is PermissionMode.ACCEPT_EDITS
    press(dialog, Qt.Key.Key_Return, CTRL)
    box = _confirm_box(qtbot, dialog)
    assert "every file edit is made without asking you" in box.text()
    qtbot.keyClick(box, Qt.Key.Key_Escape)  # not confirmed: the plan dialog stays
    qtbot.waitUntil(lambda: not box.isVisible())
    assert decisions == [] and dialog.isVisible()

    press(dialog, Qt.Key.Key_Return, CTRL)
    box = _confirm_box(qtbot, dialog)
    accept = next(b for b in box.buttons()
                  if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
    qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(decisions) == 1)
    [decision] = decisions
    assert (decision.kind, decision.next_mode) == (DecisionKind.ALLOW_ONCE,
                                                   PermissionMode.ACCEPT_EDITS)
    consent = decision.consent
    assert isinstance(consent, ModeConsent)
    assert (consent.session_id, consent.mode) == (request.session_id,
                                                  PermissionMode.ACCEPT_EDITS)


def test_keep_planning_with_feedback(open_dialog, qtbot, plan):
    dialog, decisions = open_dialog(PlanDialog(plan()))
    qtbot.keyClicks(dialog.ui.feedbackEdit, "Split step 1")
    press(dialog.ui.feedbackEdit, Qt.Key.Key_Escape)
    assert [(d.kind, d.message) for d in decisions] == [
        (DecisionKind.KEEP_PLANNING, "Split step 1")]


def test_keep_planning_button_default_message(open_dialog, qtbot, plan):
    dialog, decisions = open_dialog(PlanDialog(plan()))
    qtbot.mouseClick(dialog.ui.keepPlanningButton, Qt.MouseButton.LeftButton)
    assert [(d.kind, d.message) for d in decisions] == [
        (DecisionKind.KEEP_PLANNING, KEEP_PLANNING)]


@pytest.mark.arming
def test_arming_delay(open_dialog, qtbot, plan):
    dialog, decisions = open_dialog(PlanDialog(plan()), arm=False)
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions == [] and not dialog.ui.approveButton.isEnabled()
    qtbot.waitUntil(dialog.is_armed, timeout=2000)
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions[0].kind is DecisionKind.ALLOW_ONCE


def test_missing_plan_text(open_dialog, plan):
    dialog, _ = open_dialog(PlanDialog(plan(None)))
    assert "no plan text" in dialog.preview.browser.toPlainText()


def test_withdraw(open_dialog, plan):
    dialog, decisions = open_dialog(PlanDialog(plan()))
    dialog.withdraw()
    dialog.ui.approveButton.click()
    dialog.approve()
    press(dialog, Qt.Key.Key_Return, CTRL)
    assert decisions == [] and not dialog.isVisible()


def test_factory_builds_plan_dialog(qtbot, plan):
    dialog = dialog_for(plan())
    qtbot.addWidget(dialog)
    assert isinstance(dialog, PlanDialog)


@pytest.mark.parametrize("plan_text, summary", [
    ("# Plan: add a greeting module\n\n1. Create it.", "Plan: add a greeting module"),
    ("## plan: tidy up\n", "Plan: tidy up"),
    ("# Add a greeting module\n", "Plan: Add a greeting module"),
    ("# Plan:\n", "Plan approval"),
])
def test_a_plan_is_summarised_with_one_plan_prefix(make_request, plan_text, summary):
    assert request_summary(make_request("ExitPlanMode", {"plan": plan_text})) == summary


def test_a_plan_sent_back_shows_as_keep_planning_not_as_a_denial(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.set_events([
        TranscriptEvent(session_id="s", kind=TranscriptKind.DENIAL, text=KEEP_PLANNING,
                        tool_name="ExitPlanMode", is_error=True),
        TranscriptEvent(session_id="s", kind=TranscriptKind.DENIAL, text="no thanks",
                        tool_name="Bash", is_error=True)])
    lines = view.toPlainText().splitlines()
    assert lines[0] == f"↺ Keep planning  {KEEP_PLANNING}"
    assert lines[1] == "⊘ Denied  no thanks"
