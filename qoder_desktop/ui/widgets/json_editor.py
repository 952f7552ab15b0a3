"""The tool-input editor: JSON with syntax colours, live validation and an edit diff.

The input is shown pretty-printed with hidden characters written as `\\uXXXX` escapes
(so a bidi override or zero-width space is visible but the value is unchanged). Every
edit is parsed at once: an error names its line and column, and `value()` is None until
the text is a valid JSON object again. An "edited" marker, a Reset button and a unified
diff against the original show exactly what will run instead of what the agent sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QShowEvent,
    QTextBlock,
    QTextCharFormat,
    QTextOption,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.preview.diffs import json_edit_diff, pretty_json
from qoder_desktop.ui.scheduling import TurnSteps
from qoder_desktop.ui.widgets.json_highlight import (
    DiffHighlighter,
    JsonHighlighter,
)
from qoder_desktop.ui.widgets.json_highlight import (  # (re-exported: the old home)
    marker_format as marker_format,
)
from qoder_desktop.ui.widgets.json_text import (
    LARGE_DEBOUNCE_MS,
    LARGE_TEXT,
    READ_STEP_BLOCKS,
    parse_object,
    string_size,
    wrap_mode_for,
)
from qoder_desktop.ui.widgets.large_text import (
    SoftBreakEdit,
    display_breaks,
    is_soft,
    soft_broken_text,
    unified_linear,
)
from qoder_desktop.ui.widgets.loaders import SoftBreakLoader
from qoder_desktop.ui.widgets.preview import plain_label

__all__ = ["LARGE_TEXT", "JsonEditor", "monospace_font", "parse_object", "wrap_mode_for"]

def monospace_font() -> QFont:
    """The system's fixed-width font."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class JsonEditor(QWidget):
    """Editable, validated JSON input with an edited marker, Reset and an edit diff.

    Signals:
        validity_changed(bool): the text became valid (True) or invalid (False).
        edited_changed(bool): the value now differs (True) from the original or not.
        value_changed(object): the parsed value after an edit (None while invalid).
    """

    validity_changed = Signal(bool)
    edited_changed = Signal(bool)
    value_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._original: dict[str, Any] = {}
        self._value: dict[str, Any] | None = {}
        self._valid = True
        self._edited = False
        self._soft = False
        self._large = False
        self._original_text: str | None = "{}"
        self._held: dict[str, Any] | None = None
        """A value whose text is not written yet (`set_value(..., text_later=True)`)."""

        self.editor = SoftBreakEdit(self)
        self.editor.setObjectName("jsonEdit")
        self.editor.setFont(monospace_font())
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.editor.setTabChangesFocus(True)
        self.editor.setAccessibleName("Tool input (JSON)")
        self.editor.setAccessibleDescription("The input the tool runs with; what you allow "
                                             "runs as edited here")
        self.highlighter = JsonHighlighter(self.editor.document())

        self.status = plain_label(wrap=True)
        self.status.setObjectName("jsonStatus")
        self.edited_label = plain_label("Edited — the edited input will run", wrap=False)
        self.edited_label.setObjectName("editedMarker")
        self.reset_button = QPushButton("&Reset to original", self)
        self.reset_button.setObjectName("resetJsonButton")
        self.reset_button.setAccessibleDescription("Put the agent's original input back")
        self.reset_button.setAutoDefault(False)
        self.reset_button.clicked.connect(self.reset)
        self.reset_button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)

        self.diff_view = QPlainTextEdit(self)
        self.diff_view.setObjectName("jsonDiffView")
        self.diff_view.setReadOnly(True)
        self.diff_view.setFont(monospace_font())
        self.diff_view.setPlaceholderText("Changes to the input appear here.")
        self.diff_view.setAccessibleName("Changes to the input")
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_highlighter = DiffHighlighter(self.diff_view.document())

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.status, 1)
        row.addStretch(0)
        row.addWidget(self.edited_label)
        row.addWidget(self.reset_button)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.editor)
        splitter.addWidget(self.diff_view)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter, 1)
        layout.addLayout(row)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._revalidate)
        # (text changes only: `textChanged` also fires when the highlighter recolours)
        self.editor.document().contentsChange.connect(self._on_contents_change)
        self._diff_steps = TurnSteps(self)
        self._read_steps = TurnSteps(self)
        self._revision = 0
        """Text changes so far; `_loaded_revision` is where a large load ended."""
        self._loaded_revision = -1
        self._loader = SoftBreakLoader(self.editor)
        self._loader.finished.connect(self._loaded)
        self._show_state()

    # -- public API ------------------------------------------------------------------
    def set_value(self, value: dict[str, Any], *, text_later: bool = False) -> None:
        """Show `value` as the original input (clears any edit).

        A large input (its JSON text over `LARGE_TEXT` characters) goes in over several
        loop turns, its JSON text written in the first of them; read-only meanwhile, and
        until then the value is the original (what the agent sent).

        With `text_later` (an editor not in its dialog's first frame), `value` is the
        original and current value at once, and its text is written by `write_text()`
        or when the editor is first shown, whichever comes first; read-only until then.
        """
        self._original = value
        self._original_text = None
        self._timer.stop()
        self._diff_steps.cancel()
        self._read_steps.cancel()
        self._held = value if text_later else None
        if text_later:
            self._loader.cancel()
            self.editor.setReadOnly(True)
            self._set_state(value, "")
            return
        large = self._large = (string_size(value) > LARGE_TEXT
                               or len(self._original_json()) > LARGE_TEXT)
        self._timer.setInterval(LARGE_DEBOUNCE_MS if large else 0)
        self.highlighter.large = large
        if self.highlighter.document() is None:
            self.highlighter.setDocument(self.editor.document())
        if large:
            # (the highlighter colours each loaded piece as it goes in: no pass over all)
            self.editor.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)
            self.editor.setReadOnly(True)
            self._soft = True
            self._set_state(value, "")
            self._loader.load_from(self._original_json)
            return
        self._loader.cancel()
        self.editor.setReadOnly(False)
        self._soft = False
        text = self._original_json()
        self.editor.setWordWrapMode(wrap_mode_for(text))
        self.editor.setPlainText(text)
        self._timer.stop()  # (checked here: no second check of the same text next turn)
        self._revalidate()

    def write_text(self) -> None:
        """Write the text of a value held by `set_value(..., text_later=True)`; its value
        and state do not change, so nothing is emitted."""
        held = self._held
        if held is not None:
            with QSignalBlocker(self):
                self.set_value(held)

    def showEvent(self, event: QShowEvent) -> None:
        """A held value's text is written before the editor is first seen."""
        self.write_text()
        super().showEvent(event)

    def is_loading(self) -> bool:
        """True while a large input is still going into the editor (read-only then)."""
        return self._loader.loading

    def is_checking(self) -> bool:
        """True while an edit's check is still to come (it ends with `value_changed`)."""
        return self._revision != self._loaded_revision and (
            self._timer.isActive() or self._read_steps.is_running())

    def _on_contents_change(self, _position: int, _removed: int, _added: int) -> None:
        self._revision += 1
        self._read_steps.cancel()
        self._timer.start()

    def _loaded(self) -> None:
        self._loaded_revision = self._revision
        self.editor.setReadOnly(False)
        self._timer.start(0)  # the check, in loop turns of its own

    def _original_json(self) -> str:
        """The original input's JSON text as the editor shows it (written once)."""
        if self._original_text is None:
            self._original_text = pretty_json(self._original)
        return self._original_text

    def original(self) -> dict[str, Any]:
        """The input as the agent sent it."""
        return self._original

    def value(self) -> dict[str, Any] | None:
        """The current input: the parsed text, or None while it is invalid."""
        self._flush()
        return self._value if self._valid else None

    def is_valid(self) -> bool:
        """True when the text is a valid JSON object."""
        self._flush()
        return self._valid

    def is_edited(self) -> bool:
        """True when the text no longer means the original value (or is invalid)."""
        self._flush()
        return self._edited

    def error_text(self) -> str:
        """The current validation error ("" when valid)."""
        self._flush()
        return "" if self._valid else self.status.text()

    def reset(self) -> None:
        """Go back to the original input."""
        self.set_value(self._original)

    def focus_editor(self) -> None:
        """Move keyboard focus into the text editor."""
        self.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # -- internals -------------------------------------------------------------------
    def _flush(self) -> None:
        if self._revision == self._loaded_revision:
            return  # nothing typed since a large text loaded: the value is the original
            # (the check after loading goes on in its own loop turns)
        if (self._timer.isActive() or self._read_steps.is_running()) \
                and not self._loader.loading:
            self._timer.stop()
            self._read_steps.cancel()
            self._check(self.text())

    def text(self) -> str:
        """The editor's text exactly as typed.

        `toPlainText()` turns a no-break space into a space, so `rm\\u00a0-rf` would read
        back as `rm -rf`: the raw text is used, with only the paragraph separator (U+2029)
        between lines mapped back to `\\n`, and the display-only breaks of a large text
        (`large_text.set_soft_broken_text`) removed.
        """
        if self._loader.loading or self._held is not None:
            return self._original_json()
        document = self.editor.document()
        if self._soft:
            return soft_broken_text(document)
        return document.toRawText().replace("\u2029", "\n")

    def _revalidate(self) -> None:
        if self._loader.loading:
            return
        if self._soft:  # a large text: read a few blocks per loop turn, then checked
            self._read_steps.run(self._read_in_turns(), now=True)
        else:
            self._check(self.text())

    def _read_in_turns(self) -> Iterator[None]:
        """`text()` of a soft-broken document, `READ_STEP_BLOCKS` blocks per loop turn,
        then checked in a turn of its own. An edit meanwhile drops it (and starts the
        check again); `value()` meanwhile reads the whole text at once."""
        parts: list[str] = []
        block = self.editor.document().begin()
        count = 0
        while block.isValid():
            if count and not is_soft(block.blockFormat()):
                parts.append("\n")
            parts.append(block.text())  # (raw: a no-break space stays one)
            block = block.next()
            count += 1
            if count % READ_STEP_BLOCKS == 0:
                yield
        yield
        self._check("".join(parts))

    def _check(self, text: str) -> None:
        self._timer.setInterval(LARGE_DEBOUNCE_MS if len(text) > LARGE_TEXT else 0)
        mode = wrap_mode_for(text)
        if self.editor.wordWrapMode() != mode:
            self.editor.setWordWrapMode(mode)
        self._set_state(*parse_object(text))

    def _set_state(self, value: dict[str, Any] | None, error: str) -> None:
        valid = value is not None
        edited = (not valid) or value != self._original
        self._value = value
        changed_validity = valid != self._valid
        changed_edit = edited != self._edited
        self._valid, self._edited = valid, edited
        self.status.setText(error)
        self._show_state()
        if changed_validity:
            self.validity_changed.emit(valid)
        if changed_edit:
            self.edited_changed.emit(edited)
        self.value_changed.emit(value)

    def _show_state(self) -> None:
        self.status.setProperty("error", not self._valid)
        self.status.setVisible(not self._valid)
        if self._edited and not self.diff_view.isVisibleTo(self):
            total = max(sum(self.splitter.sizes()), 10)
            self.splitter.setSizes([total * 11 // 20, total * 9 // 20])
        self.edited_label.setVisible(self._edited)
        self.reset_button.setEnabled(self._edited)
        self.diff_view.setVisible(self._edited)
        self._diff_steps.cancel()
        if self._edited and self._valid and self._value is not None:
            if self._large:  # in loop turns of their own
                self._diff_steps.run(self._diff_in_turns(self._value))
            else:
                self.diff_view.setPlainText(self._diff_text(self._value))
        elif self._edited:
            self.diff_view.setPlainText("(the input is not valid JSON)")
        selections = []
        if not self._valid:
            match = re.search(r"line (\d+)", self.status.text())
            block = self._block_of_line(int(match[1]) - 1 if match else 0)
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(255, 80, 80, 50))
            selection.format.setProperty(QTextCharFormat.Property.FullWidthSelection, True)
            selection.cursor = self.editor.textCursor()
            selection.cursor.setPosition(block.position())
            selections.append(selection)
        self.editor.setExtraSelections(selections)

    def _diff_in_turns(self, value: dict[str, Any]) -> Iterator[None]:
        """`_diff_text` with a loop turn after each long step, then shown."""
        new = pretty_json(value)
        yield
        old = self._original_json()
        if len(old) + len(new) <= 2 * LARGE_TEXT:
            text = json_edit_diff(self._original, value)
        else:
            diff = unified_linear(old + "\n", new + "\n", "original input", "edited input")
            yield
            text = display_breaks(diff)[0]
        self.diff_view.setPlainText(text)

    def _diff_text(self, value: dict[str, Any]) -> str:
        """The edit diff as shown; a large one is linear and soft-broken for display."""
        old, new = self._original_json(), pretty_json(value)
        if len(old) + len(new) <= 2 * LARGE_TEXT:
            return json_edit_diff(self._original, value)
        return display_breaks(unified_linear(old + "\n", new + "\n", "original input",
                                             "edited input"))[0]

    def _block_of_line(self, line: int) -> QTextBlock:
        """The block where line `line` (0-based, of `text()`) starts."""
        document = self.editor.document()
        if not self._soft:
            return document.findBlockByNumber(line)
        block, seen = document.begin(), 0
        while block.isValid() and seen < line:
            block = block.next()
            if not is_soft(block.blockFormat()):
                seen += 1
        return block
