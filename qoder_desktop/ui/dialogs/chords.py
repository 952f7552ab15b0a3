"""A decision dialog's Ctrl chords work whatever widget in it has focus.

On X11 a line edit or text editor claims Ctrl+E, Ctrl+A, Ctrl+K … as editing keys
(through `ShortcutOverride`), so the dialog's shortcut would never fire. `ChordKeeper`
watches the focused widget of its dialog (only that one, moved along with the focus) and
refuses those claims for the dialog's own chords. Plain keys (digits, letters) stay with
a text field, so typing into it is never taken for a shortcut.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import QEvent, QKeyCombination, QObject, Qt, Slot
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QWidget


class ChordKeeper(QObject):
    """Refuses a focused text field's claim on one of its dialog's Ctrl chords.

    Signals:
        (none)
    """

    def __init__(self, dialog: QWidget, finished: Callable[[], bool]) -> None:
        super().__init__(dialog)  # (its dialog is its parent: no reference back to it)
        self._finished = finished
        self._chords: set[str] = set()
        """The dialog's own Ctrl chords (portable text, e.g. "Ctrl+E")."""
        self._watched: QWidget | None = None
        self._following = False

    def add(self, key: QKeySequence) -> None:
        """Keep `key` for the dialog when it is a Ctrl chord."""
        portable = key.toString(QKeySequence.SequenceFormat.PortableText)
        if portable.startswith("Ctrl+"):
            self._chords.add(portable)

    def follow_focus(self) -> None:
        """Watch the focused widget from now on (the dialog is shown)."""
        app = QApplication.instance()
        if isinstance(app, QApplication) and not self._following:
            app.focusChanged.connect(self.watch)
            self._following = True
        self.watch(None, QApplication.focusWidget())

    def stop(self) -> None:
        """Stop watching (the dialog is closed). The `finished` check is let go: it
        refers to the dialog, which then no longer waits for the garbage collector
        (its ~170 wrappers were collected in batches, several ms each, on the loop)."""
        self._finished = _closed
        app = QApplication.instance()
        if isinstance(app, QApplication) and self._following:
            with contextlib.suppress(RuntimeError, TypeError):
                app.focusChanged.disconnect(self.watch)
            self._following = False
        if self._watched is not None:
            with contextlib.suppress(RuntimeError):
                self._watched.removeEventFilter(self)
            self._watched = None

    @Slot(QWidget, QWidget)
    def watch(self, _old: QWidget | None, new: QWidget | None) -> None:
        """Move the watch to `new` when it is in the dialog (and the dialog is open)."""
        if self._watched is not None and self._watched is not new:
            with contextlib.suppress(RuntimeError):  # the widget may be gone already
                self._watched.removeEventFilter(self)
            self._watched = None
        dialog = self.parent()
        if (new is not None and isinstance(dialog, QWidget) and dialog.isAncestorOf(new)
                and not self._finished()):
            new.installEventFilter(self)
            self._watched = new

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Refuse the watched widget's `ShortcutOverride` for one of the chords."""
        if (event.type() == QEvent.Type.ShortcutOverride and watched is self._watched
                and isinstance(event, QKeyEvent) and self._is_chord(event)):
            event.ignore()
            return True
        return super().eventFilter(watched, event)

    def _is_chord(self, event: QKeyEvent) -> bool:
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        pressed = QKeySequence(QKeyCombination(modifiers, Qt.Key(event.key())))
        return pressed.toString(QKeySequence.SequenceFormat.PortableText) in self._chords


def _closed() -> bool:
    """The `finished` check of a stopped keeper: its dialog is closed."""
    return True
