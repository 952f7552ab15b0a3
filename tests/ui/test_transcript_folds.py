"""The transcript reads like a conversation: a call the person edited shows what ran
(marked, the agent's original one click away), ▶ on a call folds its output, and the
CLI's instructions to the model wait behind "details". On the app's loop (qasync)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextBlock
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.session_options import TranscriptEvent, TranscriptKind
from qoder_desktop.ui.widgets.transcript_view import EDITED_CAPTION, TranscriptView

pytestmark = pytest.mark.asyncio

ORIGINAL = "echo 'Hello from the demo' > hello.txt"
EDITED = "echo 'Hello, edited' > hello.txt"


def event(kind: TranscriptKind, text: str = "", **fields: object) -> TranscriptEvent:
    return TranscriptEvent(session_id="s", kind=kind, text=text, **fields)  # type: ignore[arg-type]


async def shown(view: TranscriptView, *events: TranscriptEvent) -> None:
    """Append `events` as the hub does and wait for their batch on the loop."""
    for item in events:
        view.append_event(item)
    for _ in range(400):
        if not view.pending_count():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the batch was never shown")


def block_with(view: TranscriptView, text: str) -> QTextBlock:
    block = view.document().firstBlock()
    while block.isValid():
        if text in block.text():
            return block
        block = block.next()
    raise AssertionError(f"no block shows {text!r}")


def visible_text(view: TranscriptView) -> str:
    lines, block = [], view.document().firstBlock()
    while block.isValid():
        if block.isVisible():
            lines.append(block.text())
        block = block.next()
    return "\n".join(lines)


def click(qtbot: QtBot, view: TranscriptView, block: QTextBlock) -> None:
    rect = view.document().documentLayout().blockBoundingRect(block)
    view.ensureCursorVisible()
    point = QPoint(int(rect.x() + 40), int(rect.y() + rect.height() / 2)
                   - view.verticalScrollBar().value())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


@pytest.fixture
def view(qtbot: QtBot) -> TranscriptView:
    widget = TranscriptView()
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    return widget


async def test_an_edited_command_shows_what_ran_and_the_original_is_one_click_away(
        qtbot: QtBot, view: TranscriptView) -> None:
    await shown(view, event(TranscriptKind.TOOL_CALL, ORIGINAL, tool_name="Bash",
                            tool_use_id="t1"))
    assert ORIGINAL in visible_text(view)
    await shown(view, event(TranscriptKind.TOOL_CALL, EDITED, tool_name="Bash",
                            tool_use_id="t1", original_text=f"command: {ORIGINAL}"),
                event(TranscriptKind.TOOL_RESULT, "(Bash completed with no output)",
                      tool_name="Bash", tool_use_id="t1"))
    text = visible_text(view)
    assert EDITED in text and "edited by you" in text
    assert ORIGINAL not in text  # replaced in place, not a second call row
    assert view.toPlainText().count("▼ Bash") == 1
    mark = block_with(view, EDITED_CAPTION)
    click(qtbot, view, mark)
    assert f"command: {ORIGINAL}" in visible_text(view)
    assert block_with(view, EDITED_CAPTION).text().startswith("▾")
    click(qtbot, view, block_with(view, EDITED_CAPTION))
    assert ORIGINAL not in visible_text(view)


async def test_the_triangle_on_a_call_folds_and_unfolds_its_output(
        qtbot: QtBot, view: TranscriptView) -> None:
    await shown(view, event(TranscriptKind.TOOL_CALL, "ls", tool_name="Bash",
                            tool_use_id="t1"),
                event(TranscriptKind.TOOL_RESULT, "a.txt\nb.txt", tool_name="Bash",
                      tool_use_id="t1"))
    assert "b.txt" in visible_text(view)
    click(qtbot, view, block_with(view, "Bash"))
    assert "b.txt" not in visible_text(view)
    assert block_with(view, "Bash  ls").text().startswith("▶")
    click(qtbot, view, block_with(view, "Bash  ls"))
    assert "b.txt" in visible_text(view)
    assert block_with(view, "Bash  ls").text().startswith("▼")


async def test_long_output_starts_folded_under_its_call(view: TranscriptView) -> None:
    output = "\n".join(f"line {n}" for n in range(30))
    await shown(view, event(TranscriptKind.TOOL_CALL, "cat big", tool_name="Bash",
                            tool_use_id="t1"),
                event(TranscriptKind.TOOL_RESULT, output, tool_name="Bash",
                      tool_use_id="t1"))
    assert "line 3" not in visible_text(view)
    assert block_with(view, "cat big").text().startswith("▶")
    assert not view.is_open("output:t1")
    # Laid out as hidden: the folded lines take no room on screen.
    layout = view.document().documentLayout()
    assert layout.blockBoundingRect(block_with(view, "line 3")).height() == 0
    assert layout.blockBoundingRect(block_with(view, "cat big")).height() > 0


async def test_the_clis_instructions_to_the_model_wait_behind_details(
        qtbot: QtBot, view: TranscriptView) -> None:
    rules = "Entered plan mode. You should now focus on exploring…\nDO NOT write files."
    await shown(view, event(TranscriptKind.TOOL_CALL, "", tool_name="EnterPlanMode",
                            tool_use_id="t1"),
                event(TranscriptKind.TOOL_RESULT, "Entered plan mode.", tool_name="EnterPlanMode",
                      tool_use_id="t1", details=rules))
    assert "DO NOT" not in visible_text(view) and "details" in visible_text(view)
    click(qtbot, view, block_with(view, "details"))
    assert "DO NOT write files." in visible_text(view)


async def test_keep_planning_is_not_styled_as_an_error(view: TranscriptView) -> None:
    await shown(view, event(TranscriptKind.DENIAL, "Keep planning.", tool_name="ExitPlanMode",
                            tool_use_id="t1"))
    block = block_with(view, "Keep planning")
    assert block.text().startswith("↺ Keep planning")
    colour = block.begin().fragment().charFormat().foreground().color().name()
    assert colour.upper() != "#E03131" and colour.upper() != "#C2410C"


async def test_a_refusal_after_a_denial_is_one_line_and_a_details_row(
        view: TranscriptView) -> None:
    await shown(view, event(TranscriptKind.TOOL_CALL, "rm x", tool_name="Bash", tool_use_id="t1"),
                event(TranscriptKind.DENIAL, "no thanks", tool_name="Bash", tool_use_id="t1",
                      is_error=True),
                event(TranscriptKind.TOOL_RESULT, "", tool_name="Bash", tool_use_id="t1",
                      details="STOP what you are doing and wait."))
    text = visible_text(view)
    assert text.count("no thanks") == 1 and "STOP" not in text


async def test_folded_output_says_how_long_it_is_and_either_row_opens_it(
        qtbot: QtBot, view: TranscriptView) -> None:
    output = "\n".join(f"line {n}" for n in range(12))
    await shown(view, event(TranscriptKind.TOOL_CALL, "cat big", tool_name="Bash",
                            tool_use_id="t1"),
                event(TranscriptKind.TOOL_RESULT, output, tool_name="Bash", tool_use_id="t1"))
    assert "▸ 12 lines of output" in visible_text(view)
    click(qtbot, view, block_with(view, "12 lines of output"))
    assert "line 11" in visible_text(view)
    assert block_with(view, "cat big").text().startswith("▼")  # the call's row follows
    assert block_with(view, "lines of output").text().startswith("▾")
    click(qtbot, view, block_with(view, "cat big"))
    assert "line 11" not in visible_text(view)
    assert block_with(view, "lines of output").text().startswith("▸")


async def test_return_on_a_fold_row_opens_it_from_the_keyboard(
        qtbot: QtBot, view: TranscriptView) -> None:
    await shown(view, event(TranscriptKind.TOOL_CALL, EDITED, tool_name="Bash",
                            tool_use_id="t1", original_text=f"command: {ORIGINAL}"))
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(view, Qt.Key.Key_Down)  # from the call's row to the "edited" row
    assert EDITED_CAPTION in view.textCursor().block().text()
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert ORIGINAL in visible_text(view)
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert ORIGINAL not in visible_text(view)


async def test_a_plan_row_shows_its_title_and_unfolds_the_whole_plan(
        qtbot: QtBot, view: TranscriptView) -> None:
    plan = "# Plan: add a greeting module\n\n1. Create greeting.py."
    await shown(view, event(TranscriptKind.TOOL_CALL, "Plan: add a greeting module",
                            tool_name="ExitPlanMode", tool_use_id="t1", details=plan))
    assert "Create greeting.py" not in visible_text(view)
    click(qtbot, view, block_with(view, "the whole plan"))
    assert "1. Create greeting.py." in visible_text(view)


async def test_the_folds_property_ids_start_at_qts_first_free_one() -> None:
    from PySide6.QtGui import QTextFormat

    from qoder_desktop.ui.widgets import transcript_folds

    assert QTextFormat.Property.UserProperty == transcript_folds.USER_PROPERTY
