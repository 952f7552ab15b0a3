"""Giving freed heap pages back to the system once the app has been idle for a while.

A busy stretch (dialogs built and deleted, transcripts read, ledger rows written) frees
what it used, but glibc keeps the freed pages inside the heap: the process holds them
until something asks for them back. `IdleTrim` asks (``malloc_trim``, see
`diagnostics.memory.return_free_memory`) once no request has waited for `IDLE_MS`: a
person's app spends most of a week like that. Nothing runs while requests wait, and a
new request puts the trim off again.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Slot

from qoder_desktop.diagnostics.memory import return_free_memory

IDLE_MS = 30_000
"""How long nothing must wait before the heap is trimmed (a trim walks the heap: a few
milliseconds on the loop, never while a request waits)."""


class IdleTrim(QObject):
    """Trims the heap `idle_ms` after the last waiting request was answered or withdrawn.

    Args:
        parent: the Qt parent.
        idle_ms: how long nothing must wait first.
        trim: what trims (the real `return_free_memory` unless a test passes another).
    """

    def __init__(self, parent: QObject | None = None, *, idle_ms: int = IDLE_MS,
                 trim: Callable[[], object] = return_free_memory) -> None:
        super().__init__(parent)
        self._trim = trim
        self.trims = 0
        """How many times the heap was trimmed."""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(idle_ms)
        self._timer.timeout.connect(self.trim_now)

    @Slot(list)
    def pending_changed(self, pending: list[object]) -> None:
        """Requests waiting now: none arms the trim, any puts it off."""
        if pending:
            self._timer.stop()
        else:
            self._timer.start()

    def is_armed(self) -> bool:
        """True while a trim is due (nothing waits and the idle time has not passed)."""
        return self._timer.isActive()

    def trim_now(self) -> None:
        """Trim the heap now (the timer's end; the soak benchmark calls it instead of
        waiting `IDLE_MS` at each checkpoint)."""
        self._timer.stop()
        self._trim()
        self.trims += 1
