"""A call the person granted in the dialog names that grant when the real CLI asks again.

The CLI asks about writes to its own settings file under any rule (so does our matcher),
so the second write of the `sensitive_write` demo comes back although the person allowed
the first one for the session. Its dialog must say which of their rules covers it, and
must not offer the same rule again as if nothing had been granted.
"""

from __future__ import annotations

import pytest
from helpers.claude_harness import Harness
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import Decision, DecisionKind
from qoder_desktop.ui.dialogs import ApprovalDialog

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]


async def test_the_second_settings_write_names_the_rule_granted_for_the_first(
        harness: Harness, qtbot: QtBot) -> None:
    session_id = await harness.start("sensitive_write")
    first = await harness.next_request()
    dialog = ApprovalDialog(first)
    qtbot.addWidget(dialog)
    decisions: list[Decision] = []
    dialog.decided.connect(decisions.append)
    offered = [str(rule) for update in dialog.grants.updates() or ()
               for rule in update.rules or ()]
    assert len(offered) == 1 and offered[0].startswith("Edit(/")
    dialog.allow_session()  # what "Allow for this session" sends
    [grant] = decisions
    assert grant.kind is DecisionKind.ALLOW_SESSION
    harness.broker.answer(first.request_id, grant)

    second = await harness.next_request()
    assert second.tool_input["content"] == '{"permissions": {"allow": ["Bash"]}}\n'
    assert second.covered_by_rule == offered[0]
    again = ApprovalDialog(second)
    qtbot.addWidget(again)
    reason = again.ui.reasonLabel.text()
    assert (f"Your session rule {offered[0]} covers this call, but the agent asked anyway"
            in reason)
    assert again.grants.updates() is None  # the same rule is not offered a second time
    assert again.grants.hint.text().startswith(f"Your session rule {offered[0]} already "
                                               "covers this call")
    harness.broker.answer(second.request_id, Decision.deny("No, you may not allow yourself Bash."))
    await harness.wait_idle()
    assert (harness.workspace / ".claude" / "settings.local.json").read_text() == "{}\n"
    assert [str(r.rule) for r in harness.hub.rules(session_id)] == offered
