"""Through the real CLI and the real window on the app's loop: the transcript shows the
command that ran after the person edited it (marked, the original one click away), and
the window shows plan mode once the agent enters it; Keep planning is its own outcome."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.claude_harness import Harness
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import PLAN_TOOL, Decision, DecisionKind, PermissionMode
from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.terminal.transcript import TranscriptFollower
from qoder_desktop.ui.control.sessions import SessionController
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.widgets.session_list import COL_MODE
from qoder_desktop.ui.widgets.transcript_view import EDITED_CAPTION, TranscriptView
from qoder_desktop.ui.windows.main_window import MainWindow

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

ORIGINAL = "echo hello > hello.txt"
EDITED = "echo 'Hello, edited by a person' > hello.txt"


def visible_text(view: TranscriptView) -> str:
    view.flush()
    lines, block = [], view.document().firstBlock()
    while block.isValid():
        if block.isVisible():
            lines.append(block.text())
        block = block.next()
    return "\n".join(lines)


@pytest.fixture
def window(qtbot: QtBot, harness: Harness) -> MainWindow:
    """The app's main window, rendering the harness's hub as the app wires it."""
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1300, 800)
    win.show()
    SessionController(harness.hub, win, Tasks(win.show_status))
    return win


async def test_an_edited_command_reads_as_what_ran(harness: Harness, window: MainWindow,
                                                   qtbot: QtBot) -> None:
    session_id = await harness.start("bash")
    request = await harness.next_request()
    assert request.tool_input["command"] == ORIGINAL
    harness.broker.answer(request.request_id,
                          Decision.allow_once({**request.tool_input, "command": EDITED}))
    await harness.wait_idle()
    assert (harness.workspace / "hello.txt").read_text() == "Hello, edited by a person\n"
    [call] = [line for line in harness.hub.transcript(session_id)
              if line.kind is TranscriptKind.TOOL_CALL]
    assert call.text == EDITED and call.original_text == f"command: {ORIGINAL}"
    view = window.ui.transcriptView
    qtbot.waitUntil(lambda: EDITED in visible_text(view))
    text = visible_text(view)
    assert EDITED_CAPTION in text and ORIGINAL not in text
    assert "Setting sources loaded" not in text
    # Re-showing the session (as selecting it does) reads the same.
    window.set_transcript(session_id, harness.hub.transcript(session_id))
    assert EDITED in visible_text(view) and ORIGINAL not in visible_text(view)


async def test_an_edited_write_marks_the_content_it_replaced(harness: Harness) -> None:
    session_id = await harness.start("write_edit")
    request = await harness.next_request()
    assert request.tool_name == "Write"
    original = request.tool_input["content"]
    harness.broker.answer(request.request_id, Decision.allow_once(
        {**request.tool_input, "content": "written by a person\n"}))
    await asyncio.wait_for(_call_marked(harness, session_id, request.tool_use_id), 90)
    [call] = [line for line in harness.hub.transcript(session_id)
              if line.tool_use_id == request.tool_use_id
              and line.kind is TranscriptKind.TOOL_CALL]
    assert call.original_text is not None and original.strip() in call.original_text
    assert Path(request.tool_input["file_path"]).read_text() == "written by a person\n"
    await harness.hub.stop(session_id)


async def _call_marked(harness: Harness, session_id: str, tool_use_id: str | None) -> None:
    while not any(line.tool_use_id == tool_use_id and line.kind is TranscriptKind.TOOL_RESULT
                  for line in harness.hub.transcript(session_id)):
        await asyncio.sleep(0.05)


async def test_the_window_shows_plan_mode_once_the_agent_enters_it(
        harness: Harness, window: MainWindow, qtbot: QtBot) -> None:
    session_id = await harness.start("plan")
    request = await harness.next_request()
    assert request.tool_name == PLAN_TOOL
    assert harness.hub.session(session_id).permission_mode is PermissionMode.PLAN
    qtbot.waitUntil(lambda: "mode plan" in window.ui.sessionDetails.text())
    model = window.ui.sessionsView.model()
    assert model.index(0, COL_MODE).data() == PermissionMode.PLAN.value
    assert window.mode_combo.currentData() == PermissionMode.PLAN.value
    harness.broker.answer(request.request_id, Decision.keep_planning("Add a README step."))
    await harness.wait_idle()
    assert "mode plan" in window.ui.sessionDetails.text()  # the agent is still planning
    [approval] = [e for e in harness.ledger.entries(session_id) if e.entry_type == "approval"]
    assert approval.outcome is DecisionKind.KEEP_PLANNING
    text = visible_text(window.ui.transcriptView)
    assert "DO NOT write" not in text  # the CLI's plan-mode rules wait behind "details"
    assert text.count("Add a README step.") == 1  # one line for the decision


async def test_a_terminal_sessions_transcript_folds_the_clis_plan_mode_rules(
        harness: Harness) -> None:
    """The JSON-lines transcript the real CLI wrote, read as a terminal session's is."""
    await harness.start("plan")
    request = await harness.next_request()
    harness.broker.answer(request.request_id, Decision.keep_planning("Keep planning."))
    await harness.wait_idle()
    config = harness.workspace.parent / "claude-config"
    [path] = list(config.glob("projects/*/*.jsonl"))
    seen: list[TranscriptEvent] = []
    follower = TranscriptFollower(path, "terminal-1", seen.append)
    while follower.poll() or getattr(follower, "behind", False):  # (newer: slice by slice)
        pass
    [entered] = [line for line in seen if line.kind is TranscriptKind.TOOL_RESULT
                 and line.tool_name == "EnterPlanMode"]
    assert "DO NOT write" not in entered.text and "DO NOT write" in entered.details
    assert not any("<tool_use_error>" in line.text for line in seen)
