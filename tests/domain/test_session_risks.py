"""One policy for session options that let tools run unapproved."""

from __future__ import annotations

import pytest

from qoder_desktop.domain.models import PermissionMode
from qoder_desktop.domain.session_options import SessionOptions


@pytest.mark.parametrize("mode", [PermissionMode.BYPASS, PermissionMode.YOLO,
                                  PermissionMode.AUTO, PermissionMode.ACCEPT_EDITS])
def test_modes_that_let_tools_run_unapproved_need_a_confirmation(mode: PermissionMode) -> None:
    with pytest.raises(ValueError, match="needs an explicit confirmation"):
        SessionOptions(cwd="/w", permission_mode=mode)
    confirmed = SessionOptions(cwd="/w", permission_mode=mode, bypass_confirmed=True)
    assert confirmed.risks() == [f"permission mode {mode.value}: {mode.risk_text}"]


@pytest.mark.parametrize("rule", ["Bash", "Edit", "Write(*)", " Bash() ", "NotebookEdit"])
def test_a_whole_tool_allow_rule_for_a_tool_that_can_do_harm_needs_a_confirmation(
        rule: str) -> None:
    with pytest.raises(ValueError, match="needs an explicit confirmation"):
        SessionOptions(cwd="/w", allowed_tools=[rule])
    with pytest.raises(ValueError, match="needs an explicit confirmation"):
        SessionOptions(cwd="/w", settings_permissions={"allow": [rule]})


def test_narrow_rules_and_safe_modes_start_without_a_confirmation() -> None:
    options = SessionOptions(cwd="/w", permission_mode=PermissionMode.PLAN,
                             allowed_tools=["Read", "Bash(npm test)", "Edit(./src/**)"],
                             settings_permissions={"allow": ["Grep"], "deny": ["Bash"]})
    assert options.risks() == []
