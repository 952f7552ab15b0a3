"""Unexpected errors shown to the person, without a flood of boxes.

An error that repeats (a timer that fails every tick, a broken signal handler fired per
row) must not bury the desk under message boxes: while a box for the same error is open,
the box counts the repeats instead; at most `MAX_OPEN_BOXES` boxes are open at once, and
what comes beyond them is counted in the newest box, with where the log is. Everything
is logged either way, rate-limited (`RateLimitedLog`): an error that repeats many times
a second logs a burst, then one line per window saying how many were left out.

A box the person closed does not come back for the same error within `REOPEN_QUIET`
seconds (an error in a loop would otherwise open box after box). Running out of file
descriptors (EMFILE/ENFILE) never opens a box at all: a window needs descriptors from the
display server too, and a box opened then hung the GUI thread for good; it is logged.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtWidgets import QApplication, QMessageBox

from qoder_desktop.diagnostics.flood import RateLimitedLog
from qoder_desktop.ui.plain_text import plain_message_box

log = logging.getLogger(__name__)

MAX_OPEN_BOXES = 3
"""Message boxes open at once; further errors are counted in the newest one."""

TITLE = "Qoder Desktop — unexpected error"
REOPEN_QUIET = 300.0
"""Seconds after the person closed a box before the same error opens one again."""
_NO_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE})


def out_of_descriptors(error: BaseException | None) -> bool:
    """True when `error` (or what caused it) is the process or system running out of
    file descriptors."""
    for _ in range(8):
        if error is None:
            return False
        if isinstance(error, OSError) and error.errno in _NO_DESCRIPTORS:
            return True
        error = error.__cause__ or error.__context__
    return False


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
        clock: monotonic seconds (tests pass their own).

    Attributes:
        reported: errors handed to the reporter (shown, counted or only logged).
    """

    def __init__(self, log_file: Path | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log_file = log_file
        self._clock = clock
        self._shown: list[_Shown] = []
        self._closed_at: dict[str, float] = {}
        self._log_limit = RateLimitedLog(clock=clock)
        self.reported = 0

    def excepthook(self, kind: type[BaseException], error: BaseException,
                   tb: TracebackType | None) -> None:
        """`sys.excepthook`: log the error and show it."""
        self.reported += 1
        self._log(f"unexpected error: {kind.__name__}: {error}", (kind, error, tb))
        if not out_of_descriptors(error):
            self.show(f"{kind.__name__}: {error}",
                      "".join(traceback.format_exception(kind, error, tb))[-4000:])

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The asyncio loop's exception handler."""
        self.reported += 1
        error = context.get("exception")
        if isinstance(error, BaseException) and agent_already_gone(error):
            log.warning("an answer could not reach an agent's CLI: it had already exited (%s)",
                        error)
            return
        self._log(f"unexpected error in the event loop: {context.get('message')}",
                  error if isinstance(error, BaseException) else None)
        if isinstance(error, BaseException) and not out_of_descriptors(error):
            self.show(f"{type(error).__name__}: {error}", str(context.get("message", "")))

    def _log(self, message: str, exc_info: Any) -> None:
        """Log an error, rate-limited per message."""
        if not log.isEnabledFor(logging.ERROR):
            return
        if isinstance(exc_info, BaseException):
            exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
        record = log.makeRecord(log.name, logging.ERROR, __file__, 0, message, (), exc_info)
        if self._log_limit.filter(record):
            log.handle(record)

    def show(self, text: str, details: str = "") -> None:
        """Show `text` (plain text, never rich text): in a new box, or counted in one;
        nothing when the person closed a box for it less than `REOPEN_QUIET` s ago."""
        if QApplication.instance() is None:
            return
        closed = self._closed_at.get(text)
        if closed is not None and self._clock() - closed < REOPEN_QUIET:
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
        now = self._clock()
        self._closed_at = {text: at for text, at in self._closed_at.items()
                           if now - at < REOPEN_QUIET}
        self._closed_at[shown.text] = now
        shown.box.deleteLater()
