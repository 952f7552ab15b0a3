"""Folds of a transcript document: a click on a call's ▼ row hides its output and shows
▶, a click again brings it back, a fold inside stays as the person left it, long output
starts closed, and an edited call's line is emptied for what really ran."""

from __future__ import annotations

from PySide6.QtGui import QTextBlock, QTextBlockFormat, QTextCursor, QTextDocument
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.widgets.transcript_folds import Folds, marked

CALL = "toolu_1"
OUTPUT = f"output:{CALL}"


class Transcript:
    """A real document written the way the transcript view writes one: block by block,
    each with its fold properties."""

    def __init__(self) -> None:
        self.document = QTextDocument()
        self.folds = Folds(self.document)
        self._cursor = QTextCursor(self.document)
        self._first = True

    def line(self, text: str, **properties: str) -> tuple[int, int]:
        if not self._first:
            self._cursor.insertBlock()
        self._first = False
        self._cursor.setBlockFormat(marked(QTextBlockFormat(), **properties))
        start = self._cursor.position()
        self._cursor.insertText(text)
        return start, self._cursor.position()

    def block(self, text: str) -> QTextBlock:
        block = self.document.firstBlock()
        while block.isValid() and block.text() != text:
            block = block.next()
        assert block.isValid(), text
        return block

    def visible(self) -> list[str]:
        shown, block = [], self.document.firstBlock()
        while block.isValid():
            if block.isVisible():
                shown.append(block.text())
            block = block.next()
        return shown


def a_call_with_output(transcript: Transcript, details: str) -> None:
    transcript.line("You: list the files")
    transcript.line("▼ Bash ls", call=CALL, toggle=OUTPUT)
    transcript.line("a.txt", fold=OUTPUT)
    transcript.line("b.txt", fold=OUTPUT)
    transcript.line("▸ details", fold=OUTPUT, toggle=details)
    transcript.line("the CLI told the model", fold=details, parent=OUTPUT)
    transcript.line("Agent: two files")


def test_a_click_on_the_row_folds_the_output_and_a_second_click_unfolds_it(qtbot: QtBot) -> None:
    transcript = Transcript()
    a_call_with_output(transcript, transcript.folds.new_details_key())
    everything = transcript.visible()
    assert transcript.folds.toggle(transcript.block("▼ Bash ls"))
    assert transcript.visible() == ["You: list the files", "▶ Bash ls", "Agent: two files"]
    assert not transcript.folds.is_open(OUTPUT)
    assert transcript.folds.toggle(transcript.block("▶ Bash ls"))
    assert transcript.visible() == everything
    assert transcript.folds.is_open(OUTPUT)


def test_a_line_that_is_no_fold_row_does_nothing(qtbot: QtBot) -> None:
    transcript = Transcript()
    a_call_with_output(transcript, transcript.folds.new_details_key())
    assert not transcript.folds.toggle(transcript.block("a.txt"))
    assert len(transcript.visible()) == 7


def test_a_closed_fold_inside_stays_closed_when_the_outer_one_opens(qtbot: QtBot) -> None:
    transcript = Transcript()
    details = transcript.folds.new_details_key()
    a_call_with_output(transcript, details)
    transcript.folds.toggle(transcript.block("▸ details"))
    assert "the CLI told the model" not in transcript.visible()
    transcript.folds.toggle(transcript.block("▼ Bash ls"))
    transcript.folds.toggle(transcript.block("▶ Bash ls"))
    assert "▸ details" in transcript.visible()
    assert "the CLI told the model" not in transcript.visible()


def test_each_details_fold_gets_its_own_key(qtbot: QtBot) -> None:
    folds = Folds(QTextDocument())
    assert folds.new_details_key() != folds.new_details_key()


def test_long_output_starts_folded(qtbot: QtBot) -> None:
    transcript = Transcript()
    start, _ = transcript.line("▼ Bash cat big.log", call=CALL, toggle=OUTPUT)
    for number in range(3):
        _, end = transcript.line(f"log line {number}", fold=OUTPUT)
    transcript.folds.settle(start, end, OUTPUT, folded=True)
    transcript.folds.relayout()
    assert transcript.visible() == ["▶ Bash cat big.log"]


def test_a_fold_asked_to_start_closed_is_closed_when_its_lines_settle(qtbot: QtBot) -> None:
    transcript = Transcript()
    details = transcript.folds.new_details_key()
    start, _ = transcript.line("▸ details", toggle=details)
    _, end = transcript.line("instructions to the model", fold=details)
    transcript.folds.close_later(details)
    transcript.folds.settle(start, end, None, folded=False)
    assert transcript.visible() == ["▸ details"]
    assert not transcript.folds.is_open(details)


def test_an_edited_call_replaces_the_line_of_the_call_the_agent_asked_for(qtbot: QtBot) -> None:
    transcript = Transcript()
    transcript.line("You: greet")
    transcript.line("▼ Bash echo hi", call=CALL, toggle=OUTPUT)
    transcript.line("  (second line of the call)", call=CALL)
    transcript.line("Agent: done")
    cursor = QTextCursor(transcript.document)
    assert transcript.folds.replace_call(cursor, CALL)
    cursor.insertText("▼ Bash echo hello (edited)")
    assert transcript.visible() == ["You: greet", "▼ Bash echo hello (edited)", "Agent: done"]
    assert not transcript.folds.replace_call(QTextCursor(transcript.document), "toolu_unknown")
