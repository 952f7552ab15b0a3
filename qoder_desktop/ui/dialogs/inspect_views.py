"""Read-only views of what a tool call would do: the shell risk lens and file diffs.

Both show model text through `visible.make_visible`, insert it as plain text, and add
colour with character formats only, so nothing the model sent is ever parsed as rich
text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument, QTextOption
from PySide6.QtWidgets import (
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from qoder_desktop.preview.diffs import FileDiff, diff_for_tool
from qoder_desktop.preview.sanitize import LONG_RUN
from qoder_desktop.rules.offer import ANALYSIS_LIMIT
from qoder_desktop.shell.risk import RiskFinding, Severity, analyze_command
from qoder_desktop.text.visible import (
    find_hidden,
    hidden_pattern,
    make_visible,
    make_visible_with_map,
    marker,
)
from qoder_desktop.ui.scheduling import TurnSteps
from qoder_desktop.ui.widgets.json_editor import monospace_font
from qoder_desktop.ui.widgets.json_highlight import DiffHighlighter, marker_format
from qoder_desktop.ui.widgets.large_text import display_breaks, shifted, too_large_note
from qoder_desktop.ui.widgets.loaders import ChunkedLoader, Spans
from qoder_desktop.ui.widgets.preview import plain_label

SEVERITY_COLORS = {
    Severity.INFO: ("#D0EBFF", "#1864AB"),
    Severity.WARNING: ("#FFEC99", "#E67700"),
    Severity.DANGER: ("#FFC9C9", "#C92A2A"),
}
SEVERITY_ORDER = (Severity.INFO, Severity.WARNING, Severity.DANGER)
MAX_HIGHLIGHTED = 200
"""Findings (and hidden characters) coloured in the command; the rest are counted."""
MAX_LISTED = 200
"""Findings listed under the command; a last line says how many more there are."""
ANALYSE_LATER_FROM = 4 * 1024
"""Commands longer than this are analysed a loop turn after they are shown (a 10 KB
command with 2,000 findings takes the analyzer about 40 ms)."""
_LONG_RUN = re.compile(r"(?<!\S)\S{" + str(LONG_RUN + 1) + "}")
"""A run longer than `LONG_RUN`; the look-behind tries each run once (linear)."""


def _has_long_run(text: str) -> bool:
    """True when `text` has a run without spaces that Qt's word wrap is slow on."""
    return _LONG_RUN.search(text) is not None


def _write_formatted(document: QTextDocument, text: str,
                     spans: list[tuple[int, int, QTextCharFormat]]) -> None:
    """Replace `document`'s text by `text`, each span's format merged over the earlier
    ones.

    Later spans win where they overlap. The text goes in as runs of equal format, in one
    edit block: a view showing the document lays it out once, at the block's end.
    """
    cuts = sorted({0, len(text), *(p for s, e, _f in spans for p in (s, e))})
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    cursor.select(QTextCursor.SelectionType.Document)
    cursor.removeSelectedText()
    starts = sorted(range(len(spans)), key=lambda k: spans[k][0])
    active: list[int] = []
    next_span = 0
    for left, right in itertools.pairwise(cuts):
        while next_span < len(starts) and spans[starts[next_span]][0] <= left:
            active.append(starts[next_span])
            next_span += 1
        active = [k for k in active if spans[k][1] > left]
        fmt = QTextCharFormat()
        for k in sorted(active):
            fmt.merge(spans[k][2])
        cursor.insertText(text[left:right], fmt)
    cursor.endEditBlock()


def _large_display(command: str) -> tuple[str, list[tuple[int, int, QTextCharFormat]]]:
    """The visible text of a command too large to analyse, with its first
    `MAX_HIGHLIGHTED` hidden characters marked (linear: no per-character offset map)."""
    pattern = hidden_pattern(command)
    if pattern is None:
        return command, []
    spans, shift = [], 0
    for match in itertools.islice(pattern.finditer(command), MAX_HIGHLIGHTED):
        width = len(marker(match[0]))
        spans.append((match.start() + shift, match.start() + shift + width, marker_format()))
        shift += width - 1
    return pattern.sub(lambda match: marker(match[0]), command), spans


def _span_format(severity: Severity) -> QTextCharFormat:
    fmt = QTextCharFormat()
    background, underline = SEVERITY_COLORS[severity]
    fmt.setBackground(QColor(background))
    fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
    fmt.setUnderlineColor(QColor(underline))
    return fmt


class RiskLensView(QWidget):
    """A shell command, shown verbatim with hidden characters visible and risky spans
    highlighted, above a list of what each highlight means.

    Signals:
        (none)
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.command_view = QTextEdit(self)
        self.command_view.setObjectName("commandView")
        self.command_view.setReadOnly(True)
        self.command_view.setAcceptRichText(False)
        self.command_view.setFont(monospace_font())
        self.command_view.setAccessibleName("Command to run")
        self.command_view.setAccessibleDescription("The shell command the agent asks to run")
        self.command_view.document().setUndoRedoEnabled(False)  # (read-only: no undo)
        self.large_view = QPlainTextEdit(self)
        self.large_view.setObjectName("largeCommandView")
        self.large_view.setReadOnly(True)
        self.large_view.setFont(monospace_font())
        self.large_view.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)
        self.large_view.setAccessibleName("Command (too large to analyse)")
        self.large_view.setAccessibleDescription("The shell command the agent asks to run")
        self.large_view.setVisible(False)
        self._loader = ChunkedLoader(self.large_view)
        self._steps = TurnSteps(self)
        self.description = plain_label()
        self.description.setObjectName("commandDescription")
        self.findings_list = QListWidget(self)
        self.findings_list.setObjectName("riskFindings")
        self.findings_list.setAccessibleName("What to look at")
        self.findings_list.setAccessibleDescription(
            "What the command does that deserves a look before you allow it")
        self.findings_list.setWordWrap(True)
        # (every item is listed at once; Qt measures the wrapped items 50 per loop turn)
        self.findings_list.setLayoutMode(QListWidget.LayoutMode.Batched)
        self.findings_list.setBatchSize(50)
        self.findings: list[RiskFinding] = []
        self.too_large = False
        self._shown: str | None = ""
        self._command = ""
        self.findings_caption = plain_label("What to look at")
        self.findings_caption.setObjectName("findingsCaption")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.description)
        layout.addWidget(self.command_view)
        layout.addWidget(self.large_view)
        layout.addWidget(self.findings_caption)
        layout.addWidget(self.findings_list, 1)

    def show_command(self, command: str, cwd: str | None = None,
                     extra_dirs: Sequence[str] = (), description: str | None = None) -> None:
        """Show `command` with its risk findings (spans refer to the original string).

        At most `MAX_HIGHLIGHTED` findings are coloured and `MAX_LISTED` listed, the most
        severe first; the caption says how many more there are. The text and its colours
        go into the view's document in one edit block (one format per run of characters), so
        the cost does not grow with the number of findings times the text's length.
        A command longer than `ANALYSE_LATER_FROM` is analysed and shown in the next loop
        turn (the caption says "analysing…" meanwhile), so opening the dialog and
        analysing it are two shorter blocks instead of one long one.
        """
        self._steps.cancel()
        self.too_large = len(command) > ANALYSIS_LIMIT
        self.command_view.setVisible(not self.too_large)
        self.large_view.setVisible(self.too_large)
        self.description.setText(f"The agent says: {make_visible(description)}"
                                 if description else "")
        self.description.setVisible(bool(description))
        if self.too_large:
            self.findings = []
            self.command_view.clear()
            self._show_large(command)
            self._list_findings(command, [])
            return
        self._loader.cancel()
        self.large_view.clear()
        if len(command) > ANALYSE_LATER_FROM:
            self.findings = []
            self._shown, self._command = None, command
            self.findings_list.clear()
            self.findings_caption.setText("What to look at (analysing…)")
            self._steps.run(self._analysed_in_turns(command, cwd, extra_dirs))
        else:
            self._show_findings(command, analyze_command(command, cwd, extra_dirs))

    def is_complete(self) -> bool:
        """True when the whole command is in the view with its findings (a long one is
        analysed a loop turn later, a large one loads in steps)."""
        return self._loader.done and not self._steps.is_running()

    def _analysed_in_turns(self, command: str, cwd: str | None,
                           extra_dirs: Sequence[str]) -> Iterator[None]:
        # (the analysis in one turn, showing it in the next: no turn does both; the
        # dialog does not arm before the last one, see `ApprovalDialog.content_complete`)
        findings = analyze_command(command, cwd, extra_dirs)
        yield
        self._show_findings(command, findings)

    def _show_findings(self, command: str, findings: list[RiskFinding]) -> None:
        self.findings = findings
        ranked = self.ranked()
        self._show_analysed(command, ranked)
        self._list_findings(command, ranked)

    def ranked(self) -> list[RiskFinding]:
        """The findings, the most severe first."""
        return sorted(self.findings, key=lambda f: (-SEVERITY_ORDER.index(f.severity),
                                                    f.start))

    def _show_analysed(self, command: str, ranked: list[RiskFinding]) -> None:
        shown, offsets = make_visible_with_map(command)
        formats = {severity: _span_format(severity) for severity in SEVERITY_ORDER}
        spans = [(offsets[f.start], offsets[f.end], formats[f.severity])
                 for f in reversed(ranked[:MAX_HIGHLIGHTED])]
        spans += [(offsets[h.index], offsets[h.index + 1], marker_format())
                  for h in find_hidden(command)[:MAX_HIGHLIGHTED]]
        self._shown = shown
        self.command_view.setWordWrapMode(
            QTextOption.WrapMode.WrapAnywhere if _has_long_run(shown)
            else QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        # (into the view's own document: a new one set on the view cost its own set-up)
        _write_formatted(self.command_view.document(), shown, spans)
        self._fit_height(self.command_view, shown)

    def _show_large(self, command: str) -> None:
        """A command too large to analyse: plain text in pieces of at most
        `DISPLAY_CHUNK` characters (display-only breaks), hidden characters marked, put
        in over several loop turns (the first one makes the text)."""
        self._shown = None
        self._command = command
        self._fit_height(self.large_view, command)
        self._loader.load_from(lambda: self._large_text(command))

    def _large_text(self, command: str) -> tuple[str, Spans]:
        shown, spans = _large_display(command)
        self._shown = shown
        display, breaks = display_breaks(shown)
        return display, [(shifted(start, breaks), shifted(end, breaks), fmt)
                         for start, end, fmt in spans]

    @staticmethod
    def _fit_height(view: QWidget, shown: str) -> None:
        lines = sum(1 + len(line) // 90 for line in shown[:20_000].split("\n"))
        spacing = view.fontMetrics().lineSpacing()
        view.setFixedHeight(min(max(lines, 2), 10) * spacing + 14)


    def _list_findings(self, command: str, ranked: list[RiskFinding]) -> None:
        self.findings_list.clear()
        for finding in ranked[:MAX_LISTED]:
            excerpt = make_visible(command[finding.start:min(finding.end, finding.start + 80)])
            if len(excerpt) > 60:
                excerpt = excerpt[:57] + "…"
            item = QListWidgetItem(f"●  {excerpt}  —  {finding.explanation}")
            item.setForeground(QColor(SEVERITY_COLORS[finding.severity][1]))
            item.setData(Qt.ItemDataRole.UserRole, finding)
            self.findings_list.addItem(item)
        notes = []
        if len(ranked) > MAX_LISTED:
            notes.append(f"{len(ranked) - MAX_LISTED:,} more not listed")
        if len(ranked) > MAX_HIGHLIGHTED:
            notes.append(f"{len(ranked) - MAX_HIGHLIGHTED:,} more not highlighted")
        self.findings_caption.setText("What to look at" + (f" ({'; '.join(notes)})"
                                                           if notes else ""))
        if notes:
            self.findings_list.addItem("… " + "; ".join(notes).capitalize() + ".")
        if self.too_large:
            self.findings_caption.setText("What to look at (not analysed: too large)")
            self.findings_list.addItem(too_large_note(len(command)))
        elif not self.findings:
            self.findings_list.addItem("Nothing in this command stands out.")

    def shown_text(self) -> str:
        """The command as displayed (hidden characters replaced by markers), without the
        display-only line breaks of a command too large to analyse."""
        if self._shown is None:  # (the view is still to be made)
            self._shown = make_visible(self._command)
        return self._shown


class DiffPanel(QWidget):
    """The unified diff a file tool would make, with a note above it.

    Signals:
        (none)
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = plain_label()
        self.note.setObjectName("diffNote")
        self.path_label = plain_label()
        self.path_label.setObjectName("diffPath")
        self.view = QPlainTextEdit(self)
        self.view.setObjectName("diffView")
        self.view.setReadOnly(True)
        self.view.setFont(monospace_font())
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setAccessibleName("Changes to the file")
        self.view.setAccessibleDescription("The lines the agent removes and adds")
        self.highlighter = DiffHighlighter(self.view.document())
        self.diff: FileDiff | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.path_label)
        layout.addWidget(self.note)
        layout.addWidget(self.view, 1)

    def show_diff(self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | None) -> None:
        """Compute and show the diff of `tool_name` with `tool_input` against the disk."""
        self.diff = diff_for_tool(tool_name, tool_input, cwd)
        diff = self.diff
        if diff is None:
            self.view.setPlainText("")
            return
        self.path_label.setText(f"File: {make_visible(diff.path)}" if diff.path else "")
        self.path_label.setVisible(bool(diff.path))
        self.note.setText(diff.note)
        self.note.setProperty("failed", not diff.ok)
        self.note.setVisible(bool(diff.note))
        self.view.setPlainText(make_visible(diff.text) if diff.text else
                               "(no changes to show)")

    def text(self) -> str:
        """The diff as displayed."""
        return self.view.toPlainText()
