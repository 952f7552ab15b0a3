"""A read-only, plain-text view of one session's transcript.

Every kind of event (prompt, assistant text, tool call, result, denial, error…) gets
its own look, but the text itself is always inserted as plain text: nothing the model
or a tool wrote is ever interpreted as markup. Events are appended at the end with a
text cursor, so a long transcript never gets rebuilt.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NamedTuple

from PySide6 import QtCore, QtGui  # (text classes and `Qt`: taken when first used, after the frame)
from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QTextEdit, QWidget

from qoder_desktop.domain.kinds import TranscriptKind
from qoder_desktop.domain.tools import PLAN_TOOL
from qoder_desktop.ui.qt_numbers import SELECTABLE_BY_MOUSE_AND_KEYBOARD
from qoder_desktop.ui.widgets.transcript_folds import (
    CLOSED_SMALL,
    OPEN_GLYPH,
    ORIGINAL_FOLD,
    OUTPUT_FOLD,
    TOGGLE_PROPERTY,
    USER_PROPERTY,
    Folds,
    marked,
)

if TYPE_CHECKING:  # pydantic and the models load after the first paint
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import (
        QKeyEvent,
        QMouseEvent,
        QPaintEvent,
        QTextBlockFormat,
        QTextCharFormat,
        QTextCursor,
    )

    from qoder_desktop.domain.session_options import TranscriptEvent

log = logging.getLogger(__name__)

KIND_PROPERTY = USER_PROPERTY + 1
"""Block-format property holding the `TranscriptKind` value of the event a block shows."""

MAX_RESULT_LINES = 24
MAX_RESULT_CHARS = 6000
MAX_BLOCKS = 50_000
BATCH_MS = 100
"""Longest an appended event waits before it is shown (the batch's first event)."""
BATCH_MAX = 200
"""A batch this large is shown at once, without waiting for the interval."""


class _Style(NamedTuple):
    """How one kind of event looks (colours are Qt's #AARRGGBB when translucent).

    (A named tuple: a frozen dataclass's generated methods cost ~0.7 ms of compiling
    before the main window's first frame.)"""

    caption: str
    color: str | None = None
    background: str | None = None
    monospace: bool = False
    italic: bool = False
    indent: int = 0
    caption_own_line: bool = False


STYLES: dict[TranscriptKind, _Style] = {
    TranscriptKind.USER_PROMPT: _Style("You", background="#1A4263EB", caption_own_line=True),
    TranscriptKind.ASSISTANT_TEXT: _Style("Agent", caption_own_line=True),
    TranscriptKind.TOOL_CALL: _Style("▼", color="#364FC7", background="#14868E96",
                                     monospace=True, indent=12),
    TranscriptKind.TOOL_RESULT: _Style("", color="#5C636A", monospace=True, indent=30),
    TranscriptKind.DENIAL: _Style("⊘ Denied", color="#C2410C", indent=12),
    TranscriptKind.RESULT: _Style("✓ Done", color="#2B8A3E"),
    TranscriptKind.ERROR: _Style("⚠ Error", color="#E03131", background="#1AE03131"),
    TranscriptKind.SYSTEM: _Style("", color="#868E96", italic=True),
}


KEEP_PLANNING_STYLE = _Style("↺ Keep planning", color="#5C636A", indent=12)
"""A denied ExitPlanMode: the person sent the plan back to be worked on."""
FOLD_STYLE = _Style("", color="#6741D9", indent=30)
"""A row that opens a fold ("▸ edited by you…", "▸ details")."""
FOLDED_STYLE = _Style("", color="#5C636A", monospace=True, indent=42)
"""What a fold holds (an edited call's original, the CLI's words to the model)."""
EDITED_CAPTION = "✎ edited by you — what the agent asked for"
DETAILS_CAPTION = "details — what the agent's CLI told the model"
PLAN_CAPTION = "the whole plan"
NO_FOLD_GLYPH = "•"
"""Leads a tool call that has no output to fold (the SDK gave no id to pair it by)."""
FOLDED_LINES = 8
"""A tool's output of this many lines or more starts folded under its call (▶ opens it)."""


def _bounded(text: str, kind: TranscriptKind) -> str:
    if kind is not TranscriptKind.TOOL_RESULT:
        return text
    lines = text.splitlines()
    cut = lines[:MAX_RESULT_LINES]
    body = "\n".join(cut)
    if len(body) > MAX_RESULT_CHARS:
        body = body[:MAX_RESULT_CHARS].rstrip() + "…"
    if len(lines) > len(cut):
        body += f"\n… {len(lines) - len(cut)} more lines"
    return body


class TranscriptView(QTextEdit):
    """Shows `TranscriptEvent`s of one session, each kind styled distinctly.

    Signals:
        None of its own (inherits QTextEdit's).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.document().setMaximumBlockCount(MAX_BLOCKS)
        self.document().setDocumentMargin(12)
        self._fixed: QtGui.QFont | None = None  # the system's fixed font, when first needed
        self.setPlaceholderText("Nothing here yet.")
        self._opaque: QWidget | None = None  # the viewport, once `finish_set_up` ran
        self._char_formats: dict[tuple[_Style, bool, bool], QTextCharFormat] = {}
        self._block_formats: dict[tuple[_Style, TranscriptKind, bool, int],
                                  QTextBlockFormat] = {}
        self._pending: list[TranscriptEvent] = []
        self._folds = Folds(self.document())
        # A caret the keyboard moves, so Return or Space opens the fold it is on.
        self.setProperty("textInteractionFlags", SELECTABLE_BY_MOUSE_AND_KEYBOARD)  # (`qt_numbers`)
        self._batch = QTimer(self)
        self._batch.setSingleShot(True)
        self._batch.setInterval(BATCH_MS)
        self._batch.timeout.connect(self.flush)

    def finish_set_up(self) -> None:
        """Make the viewport opaque (`paintEvent` fills it) and track the mouse over it
        (a pointing hand over a fold's row); once, before the first event is shown.

        Not done in ``__init__``: the first ``viewport()`` of a run makes PySide6 look
        the returned widget's class up among every QWidget subclass it has, building
        each one's enums (~10 ms), which the main window leaves until after its first
        frame (`MainWindow.finish_after_first_frame`).
        """
        if self._opaque is None:
            viewport = self.viewport()
            viewport.setAttribute(QtCore.Qt.WidgetAttribute.WA_OpaquePaintEvent)
            viewport.setMouseTracking(True)
            self._opaque = viewport

    def clear_events(self) -> None:
        """Remove every event (shown or still waiting in the batch)."""
        self._pending.clear()
        self._batch.stop()
        self.clear()
        self._folds.clear()

    def set_events(self, events: list[TranscriptEvent]) -> None:
        """Show exactly `events`, scrolled to the end."""
        self.finish_set_up()
        self.clear_events()
        cursor = QtGui.QTextCursor(self.document())
        cursor.beginEditBlock()
        for event in events:
            self._insert(cursor, event)
        cursor.endEditBlock()
        self._folds.relayout()
        self._scroll_to_end()

    def append_event(self, event: TranscriptEvent) -> None:
        """Add one event at the end, shown with the others of its batch (at most
        `BATCH_MS` later); the view follows it when it was scrolled to the end."""
        self._pending.append(event)
        if len(self._pending) >= BATCH_MAX:
            self.flush()
        elif not self._batch.isActive():
            self._batch.start()

    def pending_count(self) -> int:
        """Events appended but not shown yet (their batch's interval has not passed)."""
        return len(self._pending)

    @Slot()
    def flush(self) -> None:
        """Show the waiting events now, in order, in one edit (one layout, one repaint)."""
        self._batch.stop()
        if not self._pending:
            return
        events, self._pending = self._pending, []
        self.finish_set_up()
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        cursor = QtGui.QTextCursor(self.document())
        cursor.beginEditBlock()
        try:
            for event in events:
                try:
                    self._insert(cursor, event)
                except Exception:  # one bad event must not take the rest of its batch
                    log.exception("a transcript event could not be shown")
        finally:
            cursor.endEditBlock()
            self._folds.relayout()
        if at_end:
            self._scroll_to_end()

    def is_open(self, key: str) -> bool:
        """True when the fold `key` (e.g. ``output:<tool_use_id>``) shows its blocks."""
        return self._folds.is_open(key)

    def toggle_at(self, position: QPoint) -> bool:
        """Open or close the fold whose row is at `position` in the viewport (False: no
        fold row there)."""
        return self._folds.toggle(self.cursorForPosition(position).block())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click (not a drag that selected text) on a fold's row opens or closes it."""
        super().mouseReleaseEvent(event)
        if (event.button() is QtCore.Qt.MouseButton.LeftButton
                and not self.textCursor().hasSelection()):
            self.toggle_at(event.position().toPoint())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Return, Enter or Space on a fold's row (the caret's line) opens or closes it."""
        qt = QtCore.Qt
        if (event.key() in (qt.Key.Key_Return, qt.Key.Key_Enter, qt.Key.Key_Space)
                and not event.modifiers() & ~qt.KeyboardModifier.KeypadModifier
                and self._folds.toggle(self.textCursor().block())):
            event.accept()
            return
        super().keyPressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """A pointing hand over a fold's row says it can be clicked."""
        super().mouseMoveEvent(event)
        block = self.cursorForPosition(event.position().toPoint()).block()
        on_row = bool(block.blockFormat().property(TOGGLE_PROPERTY))
        self.viewport().setCursor(QtCore.Qt.CursorShape.PointingHandCursor if on_row
                                  else QtCore.Qt.CursorShape.IBeamCursor)

    def paintEvent(self, event: QPaintEvent) -> None:
        """Fill the exposed part of the viewport with the base colour, then draw the text
        (the viewport is opaque: Qt paints nothing beneath it; before `finish_set_up` Qt
        fills it)."""
        if self._opaque is not None:
            painter = QtGui.QPainter(self._opaque)
            painter.fillRect(event.rect(), self.palette().base())
            painter.end()
        super().paintEvent(event)

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    # -- formatting --------------------------------------------------------------------

    def _char_format(self, style: _Style, *, caption: bool = False,
                     is_error: bool = False) -> QTextCharFormat:
        key = (style, caption, is_error)
        cached = self._char_formats.get(key)
        if cached is not None:
            return cached
        fmt = QtGui.QTextCharFormat()
        color = "#E03131" if is_error else style.color
        if color:
            fmt.setForeground(QtGui.QColor(color))
        if style.monospace and not caption:
            if self._fixed is None:
                self._fixed = QtGui.QFontDatabase.systemFont(
                    QtGui.QFontDatabase.SystemFont.FixedFont)
            fmt.setFontFamilies(self._fixed.families())
            fmt.setFontFixedPitch(True)
        if caption:
            fmt.setFontWeight(QtGui.QFont.Weight.Bold)
            if style.caption_own_line:
                fmt.setForeground(QtGui.QColor("#4263EB" if style.caption == "You" else "#495057"))
        if style.italic:
            fmt.setFontItalic(True)
        self._char_formats[key] = fmt
        return fmt

    def _block_format(self, style: _Style, kind: TranscriptKind, *,
                      is_error: bool, top: int = 0) -> QTextBlockFormat:
        key = (style, kind, is_error, top)
        cached = self._block_formats.get(key)
        if cached is not None:
            return cached
        fmt = QtGui.QTextBlockFormat()
        fmt.setProperty(KIND_PROPERTY, kind.value)
        fmt.setLeftMargin(style.indent)
        fmt.setTopMargin(top)
        background = "#1AE03131" if is_error else style.background
        if background:
            fmt.setBackground(QtGui.QColor(background))
        self._block_formats[key] = fmt
        return fmt

    def _insert(self, cursor: QTextCursor, event: TranscriptEvent) -> None:
        """Show `event` at the end, or in place of the call line an edited call replaces."""
        if (event.kind is TranscriptKind.TOOL_CALL and event.original_text is not None
                and event.tool_use_id and self._folds.replace_call(cursor, event.tool_use_id)):
            self._write(cursor, event)
            return
        cursor.movePosition(QtGui.QTextCursor.MoveOperation.End)
        if not self.document().isEmpty():
            cursor.insertBlock()
        self._write(cursor, event)

    def _write(self, cursor: QTextCursor, event: TranscriptEvent) -> None:
        """Write `event` from the start of the (empty) block the cursor is in."""
        kind = event.kind
        block_style = style = STYLES.get(kind, STYLES[TranscriptKind.SYSTEM])
        is_error = event.is_error and kind is TranscriptKind.TOOL_RESULT
        caption = style.caption
        call_id = event.tool_use_id if kind is TranscriptKind.TOOL_CALL else None
        fold = (f"{OUTPUT_FOLD}{event.tool_use_id}"
                if kind is TranscriptKind.TOOL_RESULT and event.tool_use_id else None)
        if kind is TranscriptKind.TOOL_CALL:
            # ▼/▶ open and close the call's output; a call without an id has none.
            caption = f"{OPEN_GLYPH if call_id else NO_FOLD_GLYPH} {event.tool_name or 'Tool'}"
        elif kind is TranscriptKind.DENIAL and event.tool_name == PLAN_TOOL:
            style = KEEP_PLANNING_STYLE  # a plan sent back is not a denied tool call
            caption = style.caption
        start = cursor.position()
        lines = event.text.count("\n") + 1
        folded = bool(fold) and not is_error and bool(event.text) and lines >= FOLDED_LINES
        if folded:  # a row that says what is folded, and opens it like the call's ▶
            cursor.setBlockFormat(marked(self._block_format(FOLD_STYLE, TranscriptKind.SYSTEM,
                                                            is_error=False), toggle=fold))
            cursor.insertText(f"{CLOSED_SMALL} {lines} lines of output",
                              self._char_format(FOLD_STYLE))
            cursor.insertBlock()
        first_format = self._block_format(block_style, kind, is_error=is_error,
                                          top=12 if style.caption_own_line else 6)
        first_block = cursor.block()
        text = _bounded(event.text, kind)
        only_details = kind is TranscriptKind.TOOL_RESULT and not text
        if not only_details:  # (else only its details row, under the line it belongs to)
            cursor.setBlockFormat(marked(first_format, call=call_id, fold=fold,
                                         toggle=f"{OUTPUT_FOLD}{call_id}" if call_id else None))
            text_after_caption_line = False
            if caption:
                cursor.insertText(caption, self._char_format(style, caption=True))
                if style.caption_own_line:
                    stamp_fmt = QtGui.QTextCharFormat()
                    stamp_fmt.setForeground(QtGui.QColor("#868E96"))
                    stamp_fmt.setFontPointSize(max(7.0, self.font().pointSizeF() - 1))
                    cursor.insertText(f"  {event.at.astimezone().strftime('%H:%M:%S')}",
                                      stamp_fmt)
                    cursor.insertBlock(self._block_format(block_style, kind, is_error=is_error))
                    text_after_caption_line = True
                elif text:
                    cursor.insertText("  ", self._char_format(style))
            cursor.insertText(text, self._char_format(style, is_error=is_error))
            if not text_after_caption_line and cursor.block() != first_block:
                # The text's own line breaks made blocks with the first one's spacing.
                rest = QtGui.QTextCursor(first_block.next())
                rest.setPosition(cursor.position(), QtGui.QTextCursor.MoveMode.KeepAnchor)
                rest.setBlockFormat(marked(
                    self._block_format(block_style, kind, is_error=is_error),
                    call=call_id, fold=fold))
        if event.original_text is not None and call_id:
            self._fold_row(cursor, not only_details, EDITED_CAPTION,
                           f"{ORIGINAL_FOLD}{call_id}", event.original_text,
                           call=call_id, parent=None)
        if event.details:
            caption = PLAN_CAPTION if call_id and event.tool_name == PLAN_TOOL else DETAILS_CAPTION
            self._fold_row(cursor, not only_details, caption,
                           self._folds.new_details_key(), event.details, call=None,
                           parent=fold)
        self._folds.settle(start, cursor.position(), fold, folded=folded)

    def _fold_row(self, cursor: QTextCursor, new_block: bool, caption: str, key: str,
                  text: str, *, call: str | None, parent: str | None) -> None:
        """A clickable "▸ caption" row and, folded under it, `text`."""
        style = FOLD_STYLE
        if new_block:
            cursor.insertBlock()
        cursor.setBlockFormat(marked(self._block_format(style, TranscriptKind.SYSTEM,
                                                        is_error=False),
                                     call=call, fold=parent, toggle=key))
        cursor.insertText(f"{CLOSED_SMALL} {caption}", self._char_format(style))
        cursor.insertBlock(marked(self._block_format(FOLDED_STYLE, TranscriptKind.SYSTEM,
                                                     is_error=False),
                                  call=call, fold=key, parent=parent))
        first = cursor.block()
        cursor.insertText(text, self._char_format(FOLDED_STYLE))
        if cursor.block() != first:
            rest = QtGui.QTextCursor(first.next())
            rest.setPosition(cursor.position(), QtGui.QTextCursor.MoveMode.KeepAnchor)
            rest.setBlockFormat(first.blockFormat())
        self._folds.close_later(key)
