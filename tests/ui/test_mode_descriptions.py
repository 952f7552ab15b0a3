"""A permission mode is described in one wording (`PermissionMode.description`): the
new-session form and the plan dialog's "continue in" picker say the same about a mode."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.kinds import PermissionMode
from qoder_desktop.ui.dialogs.plan import PlanDialog
from qoder_desktop.ui.windows.new_session_form import NewSessionDialog


def _shown(combo: QComboBox) -> dict[PermissionMode, str]:
    return {PermissionMode(combo.itemData(i)): combo.itemText(i) for i in range(combo.count())}


def test_every_mode_is_offered_with_its_name_and_what_it_does(qtbot: QtBot) -> None:
    form = NewSessionDialog()
    qtbot.addWidget(form)
    shown = _shown(form.ui.modeCombo)
    assert list(shown) == list(PermissionMode)
    for mode, text in shown.items():
        assert mode.description and text == f"{mode.value} — {mode.description}"
    assert "without asking" in shown[PermissionMode.BYPASS]
    assert "classifier" in shown[PermissionMode.AUTO]


def test_the_plan_dialog_describes_its_modes_as_the_new_session_form_does(
        qtbot: QtBot) -> None:
    form, plan = NewSessionDialog(), PlanDialog()
    qtbot.addWidget(form)
    qtbot.addWidget(plan)
    in_form, in_plan = _shown(form.ui.modeCombo), _shown(plan.ui.modeCombo)
    assert list(in_plan) == [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS]
    assert in_plan == {mode: in_form[mode] for mode in in_plan}
