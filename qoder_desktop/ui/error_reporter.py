"""Unexpected errors shown to the person, without a flood of boxes.

An error that repeats (a timer that fails every tick, a broken signal handler fired per
row) must not bury the desk under message boxes: while a box for the same error is open,
the box counts the repeats instead; at most `MAX_OPEN_BOXES` boxes are open at once, and
what comes beyond them is counted in the newest box, with where the log is. Everything
is logged either way.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtWidgets import QApplication, QMessageBox

from qoder_desktop.ui.plain_text import plain_message_box

log = logging.getLogger(__name__)

MAX_OPEN_BOXES = 3
"""Message boxes open at once; further errors are counted in the newest one."""

TITLE = "Qoder Desktop — unexpected error"


class _Shown:
    """One open box, the error it shows and how often that error came."""

    def __init__(self, box: QMessageBox, text: str) -> None:
        self.box = box
        self.text = text
        self.repeats = 1
        self.more = 0  # other errors not shown in a box of their own


def agent_already_gone(error: BaseException) -> bool:
    """True for an agent SDK's failure to write to a CLI that has exited (a task the SDK
    started for one control request, e.g. the answer to a permission request sent while
    Ctrl+C ended the app and its CLI together): nothing a person can act on, and the
    session already shows that its agent ended. Matched by name: views never import an SDK.
    """
    for link in (error, error.__context__, error.__cause__):
        if (link is not None and type(link).__name__ == "CLIConnectionError"
                and any(words in str(link) for words in _WRITE_AFTER_EXIT)):
            return True
    return False


_WRITE_AFTER_EXIT = ("terminated process", "process that exited",
                     "Failed to write to process stdin", "not ready for writing")
"""How claude-agent-sdk (0.2.x) words a write to a CLI that has gone (its transport's
`write`)."""


class ErrorReporter:
    """Shows unexpected errors in non-blocking message boxes instead of dying.

    Args:
        log_file: where the log is written, named in a box that counts errors it does
            not show (None: "the log").
    """

    def __init__(self, log_file: Path | None = None) -> None:
        self._log_file = log_file
        self._shown: list[_Shown] = []

    def excepthook(self, kind: type[BaseException], error: BaseException,
                   tb: TracebackType | None) -> None:
        """`sys.excepthook`: log the error and show it."""
        log.error("unexpected error", exc_info=(kind, error, tb))
        self.show(f"{kind.__name__}: {error}",
                  "".join(traceback.format_exception(kind, error, tb))[-4000:])

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The asyncio loop's exception handler."""
        error = context.get("exception")
        if isinstance(error, BaseException) and agent_already_gone(error):
            log.warning("an answer could not reach an agent's CLI: it had already exited (%s)",
                        error)
            return
        log.error("unexpected error in the event loop: %s", context.get("message"),
                  exc_info=error if isinstance(error, BaseException) else None)
        if isinstance(error, BaseException):
            self.show(f"{type(error).__name__}: {error}", str(context.get("message", "")))

    def show(self, text: str, details: str = "") -> None:
        """Show `text` (plain text, never rich text): in a new box, or counted in one."""
        if QApplication.instance() is None:
            return
        same = next((shown for shown in self._shown if shown.text == text), None)
        if same is not None:
            same.repeats += 1
            self._refresh(same)
            return
        if len(self._shown) >= MAX_OPEN_BOXES:
            newest = self._shown[-1]
            newest.more += 1
            self._refresh(newest)
            return
        box = QMessageBox(QMessageBox.Icon.Critical, TITLE, "")
        if details:
            box.setDetailedText(details)
        shown = _Shown(box, text)
        box.finished.connect(lambda _code, s=shown: self._closed(s))
        self._shown.append(shown)
        self._refresh(shown)
        box.open()

    def _refresh(self, shown: _Shown) -> None:
        lines = [f"Something went wrong, but Qoder Desktop keeps running.\n\n{shown.text}"]
        if shown.repeats > 1:
            lines.append(f"This happened {shown.repeats} times.")
        if shown.more:
            where = str(self._log_file) if self._log_file is not None else "the log"
            counted = ("1 more unexpected error was" if shown.more == 1
                       else f"{shown.more} more unexpected errors were")
            lines.append(f"{counted} not shown here; see {where}.")
        plain_message_box(shown.box, "\n\n".join(lines))

    def _closed(self, shown: _Shown) -> None:
        if shown in self._shown:
            self._shown.remove(shown)
        shown.box.deleteLater()
