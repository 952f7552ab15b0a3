"""Whether the desk sees the person again while Away mode is on: a key press or a
click in the app's windows (see `ui/control/away.py` for what counts and its limit)."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget


class PersonWatch(QObject):
    """Sees a key press or a click in the app's windows (installed on the application
    while Away mode is on) and calls `seen` for those that count (see the module
    docstring)."""

    def __init__(self, seen: Callable[[], None], idle_s: Callable[[], float],
                 setting_up: Callable[[QWidget], bool]) -> None:
        super().__init__()
        self._seen = seen
        self._idle_s = idle_s
        self._setting_up = setting_up
        self._last_input = time.monotonic()

    def start(self) -> None:
        """Watch from now (input before this does not count)."""
        self._last_input = time.monotonic()
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def stop(self) -> None:
        """Stop watching."""
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Note a person's key press or click; never takes the event."""
        if (event.type() in (QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress)
                and event.spontaneous() and isinstance(watched, QWidget)
                and not self._setting_up(watched.window())):
            now = time.monotonic()
            idle, self._last_input = now - self._last_input, now
            if idle >= self._idle_s():
                self._seen()
        return False
