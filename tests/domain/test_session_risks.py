"""One policy for session options that let tools run unapproved."""

from __future__ import annotations

import pytest

from qoder_desktop.domain.models import PermissionMode
from qoder_desktop.domain.session_options import SessionOptions


@pytest.mark.parametrize("mode", [PermissionMode.BYPASS, PermissionMode.YOLO,
                                  PermissionMode.AUTO, PermissionMode.ACCEPT_EDITS])
def test_modes_that_let_tools_run_unapproved_are_risks(mode: PermissionMode) -> None:
    options = SessionOptions(cwd="/w", permission_mode=mode)
    assert options.risks() == [f"permission mode {mode.value}: {mode.risk_text}"]
    assert options.consent is None  # a start needs the person's consent (agents tests)


@pytest.mark.parametrize("rule", ["Bash", "Edit", "Write(*)", " Bash() ", "NotebookEdit"])
def test_a_whole_tool_allow_rule_for_a_tool_that_can_do_harm_is_a_risk(rule: str) -> None:
    tool = rule.strip().split("(")[0]
    expected = [f"allowed tool {rule.strip()}: every {tool} call runs without asking"]
    assert SessionOptions(cwd="/w", allowed_tools=[rule]).risks() == expected
    assert SessionOptions(cwd="/w", settings_permissions={"allow": [rule]}).risks() == expected


def test_narrow_rules_and_safe_modes_start_without_a_confirmation() -> None:
    options = SessionOptions(cwd="/w", permission_mode=PermissionMode.PLAN,
                             allowed_tools=["Read", "Bash(npm test)", "Edit(./src/**)"],
                             settings_permissions={"allow": ["Grep"], "deny": ["Bash"]})
    assert options.risks() == []
