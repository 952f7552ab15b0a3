"""Large texts go into their views over several loop turns: the caller's turn only
starts the load, the view fills a step at a time, and what is in at the end is exactly
the text (spans coloured; an editor's soft breaks invisible in the text read back)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.widgets.large_text import soft_broken_text
from qoder_desktop.ui.widgets.loaders import LOAD_STEP, ChunkedLoader, SoftBreakLoader


def view(qtbot: QtBot) -> QPlainTextEdit:
    widget = QPlainTextEdit()
    qtbot.addWidget(widget)
    return widget


def red() -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor("#C92A2A"))
    return fmt


def colour_at(widget: QPlainTextEdit, position: int) -> str:
    cursor = QTextCursor(widget.document())
    cursor.setPosition(position + 1)  # the format of the character before the cursor
    return cursor.charFormat().foreground().color().name().upper()


def test_a_large_command_fills_the_view_a_step_at_a_time_then_is_coloured(
        qtbot: QtBot) -> None:
    widget = view(qtbot)
    loader = ChunkedLoader(widget)
    text = "rm -rf build && " + "x" * (3 * LOAD_STEP)
    loader.load(text, [(0, 6, red())])
    assert not loader.done
    assert widget.document().characterCount() - 1 == LOAD_STEP  # only the first step
    qtbot.waitUntil(lambda: loader.done)
    assert widget.toPlainText() == text
    assert colour_at(widget, 0) == "#C92A2A"
    assert colour_at(widget, 10) != "#C92A2A"


def test_a_new_load_replaces_the_one_under_way(qtbot: QtBot) -> None:
    widget = view(qtbot)
    loader = ChunkedLoader(widget)
    loader.load("a" * (3 * LOAD_STEP), [])
    loader.load_from(lambda: ("short command", []))
    assert widget.toPlainText() == ""  # computed in a turn of its own
    qtbot.waitUntil(lambda: loader.done)
    assert widget.toPlainText() == "short command"


def test_a_large_json_text_comes_back_exactly_and_undo_returns_after(qtbot: QtBot) -> None:
    editor = view(qtbot)
    loader = SoftBreakLoader(editor)
    text = '{"content": "' + "y" * (2 * LOAD_STEP) + '",\n "n": 1}'
    with qtbot.waitSignal(loader.finished, timeout=10_000):
        loader.load(text)
        assert loader.loading and editor.toPlainText() == ""
        assert not editor.document().isUndoRedoEnabled()
    assert soft_broken_text(editor.document()) == text
    assert editor.document().blockCount() > 2  # the long line shown in pieces
    assert editor.document().isUndoRedoEnabled() and not loader.loading


def test_a_cancelled_load_keeps_what_is_in_and_gives_undo_back(qtbot: QtBot) -> None:
    editor = view(qtbot)
    loader = SoftBreakLoader(editor)
    text = "z" * (4 * LOAD_STEP)
    loader.load(text)
    editor.document().contentsChanged.connect(loader.cancel)  # cancelled in its first step
    qtbot.waitUntil(lambda: not loader.loading)
    kept = soft_broken_text(editor.document())
    assert 0 < len(kept) < len(text) and text.startswith(kept)
    assert editor.document().isUndoRedoEnabled()
