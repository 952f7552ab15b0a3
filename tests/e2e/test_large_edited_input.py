"""A large input edited in the approval dialog is, byte for byte, what the real CLI runs.

The request is the one the real Claude Code CLI sent (the scripted model asks for a Bash
call); the dialog is shown for it with a large command (80 KB, above the analysis bound
and shown as soft-broken pieces), one character is typed deep inside a continued piece,
and "allow once" answers the CLI. The file the command writes holds exactly the edited
text, no-break spaces included.
"""

from __future__ import annotations

import asyncio

import pytest
from helpers.claude_harness import Harness
from PySide6.QtGui import QTextCursor

from qoder_desktop.domain.models import Decision, DecisionKind
from qoder_desktop.rules.offer import ANALYSIS_LIMIT
from qoder_desktop.ui.dialogs import ApprovalDialog

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]


async def test_a_large_edited_input_reaches_the_cli_byte_exactly(harness: Harness, qtbot,
                                                                 qapp) -> None:  # type: ignore[no-untyped-def]
    qapp.setQuitOnLastWindowClosed(False)  # as the app does: the dialog closing ends nothing
    await harness.start("bash")
    request = await harness.next_request()
    payload = ("a\u00a0b " * 10_000) + "MARK" + ("c" * 40_000)
    command = f"printf '%s' '{payload}' > big.txt"
    assert len(command) > ANALYSIS_LIMIT
    shown = request.model_copy(update={"tool_input": dict(request.tool_input,
                                                          command=command)})
    dialog = ApprovalDialog(shown)
    qtbot.addWidget(dialog)
    decisions: list[Decision] = []
    dialog.decided.connect(decisions.append)
    dialog.show()
    assert not dialog.grants.rule_edits and "too large" in dialog.grants.hint.text()
    while dialog.json_editor.is_loading():  # a large input goes in over a few loop turns
        await asyncio.sleep(0.01)
    editor = dialog.json_editor.editor
    found = editor.document().find("MARK")
    assert found.blockNumber() > 0 and not found.isNull()
    cursor = QTextCursor(found)
    cursor.clearSelection()
    editor.setTextCursor(cursor)
    qtbot.keyClicks(editor, "Q")
    dialog.allow_once()
    [decision] = decisions
    assert decision.kind is DecisionKind.ALLOW_ONCE
    edited = payload.replace("MARK", "MARKQ")
    assert decision.final_input == dict(request.tool_input,
                                        command=f"printf '%s' '{edited}' > big.txt")
    harness.broker.answer(request.request_id, decision)
    await harness.wait_idle()
    assert (harness.workspace / "big.txt").read_bytes() == edited.encode()
