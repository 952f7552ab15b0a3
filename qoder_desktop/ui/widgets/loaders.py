"""Large texts go into their views over several loop turns, so no turn blocks the app.

`scheduling.TurnSteps` runs a generator one step per loop turn (each `yield` ends a
turn); it is also importable from here, where the loaders' users find it. The two loaders
use it: `SoftBreakLoader` puts a large JSON text into the editor as soft-broken
blocks (see `large_text`), `ChunkedLoader` a large command into a read-only view. Both
compute their text in a turn of its own too, so the caller's turn only starts them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from qoder_desktop.ui.scheduling import TurnSteps
from qoder_desktop.ui.widgets.large_text import SOFT, display_pieces

__all__ = ["LOAD_STEP", "ChunkedLoader", "SoftBreakLoader", "Spans"]

LOAD_STEP = 128 * 1024
"""Characters a loader puts into its view per loop turn."""

Spans = list[tuple[int, int, QTextCharFormat]]


class ChunkedLoader(QObject):
    """Puts a large text into a read-only plain-text view over several loop turns
    (`LOAD_STEP` characters each), then colours the given spans: no one long block.

    Signals:
        (none; `done` says when the whole text is in)
    """

    def __init__(self, view: QPlainTextEdit) -> None:
        super().__init__(view)
        self._view = view
        view.setUndoRedoEnabled(False)
        self._steps = TurnSteps(self)
        self.done = True

    def load(self, text: str, spans: Spans) -> None:
        """Replace the view's text with `text`; the first step runs now."""
        self.load_from(lambda: (text, spans), now=True)

    def load_from(self, source: Callable[[], tuple[str, Spans]], *, now: bool = False) -> None:
        """Replace the view's text with what `source()` returns, computed in the first
        step (now, or in the next loop turn); the view is empty until then."""
        self.cancel()
        self._view.clear()
        self.done = False
        self._steps.run(self._load(source), now=now)

    def cancel(self) -> None:
        """Stop loading (the view keeps what is in so far)."""
        self._steps.cancel()
        self.done = True

    def _load(self, source: Callable[[], tuple[str, Spans]]) -> Iterator[None]:
        text, spans = source()
        document = self._view.document()
        for start in range(0, len(text), LOAD_STEP):
            if start:
                yield
            cursor = QTextCursor(document)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text[start:start + LOAD_STEP])
        if spans:
            yield
            cursor = QTextCursor(document)
            cursor.beginEditBlock()
            for start, end, fmt in spans:
                cursor.setPosition(start)
                cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(fmt)
            cursor.endEditBlock()
        self.done = True


class SoftBreakLoader(QObject):
    """Loads a large text into an editor as soft-broken blocks (see `large_text`),
    `LOAD_STEP` characters per loop turn, without an undo step.

    The text is computed (`load_from`) and cut into pieces in turns of their own.

    Signals:
        finished(): the whole text is in.
    """

    finished = Signal()

    def __init__(self, editor: QPlainTextEdit) -> None:
        super().__init__(editor)
        self._editor = editor
        self._steps = TurnSteps(self)
        self._soft_format, self._hard_format = QTextBlockFormat(), QTextBlockFormat()
        self._soft_format.setProperty(SOFT, True)
        self.loading = False

    def load(self, text: str) -> None:
        """Start loading `text` (its first step runs in the next loop turn)."""
        self.load_from(lambda: text)

    def load_from(self, source: Callable[[], str]) -> None:
        """Start loading the text `source()` returns (called in the next loop turn)."""
        self.cancel()
        document = self._editor.document()
        document.setUndoRedoEnabled(False)
        document.clear()
        self.loading = True
        self._steps.run(self._load(source))

    def cancel(self) -> None:
        """Stop loading; the document keeps what is in so far."""
        self._steps.cancel()
        if self.loading:
            self._editor.document().setUndoRedoEnabled(True)
        self.loading = False

    def _load(self, source: Callable[[], str]) -> Iterator[None]:
        text = source()
        yield
        pieces, soft_numbers = display_pieces(text)
        soft = set(soft_numbers)
        del text
        number = 0
        while number < len(pieces):
            yield
            cursor = QTextCursor(self._editor.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.beginEditBlock()
            budget = LOAD_STEP
            while number < len(pieces) and budget > 0:
                if number:
                    cursor.insertBlock(self._soft_format if number in soft
                                       else self._hard_format)
                cursor.insertText(pieces[number])
                budget -= len(pieces[number]) + 1
                number += 1
            cursor.endEditBlock()
        self.cancel()
        self.finished.emit()
