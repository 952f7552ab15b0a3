"""The arming delay: decision controls stay inert for a moment after a dialog appears.

A keystroke meant for another window (Return, Ctrl+Return, a digit) must never approve
something that popped up under the cursor. `ArmingGate` disables the widgets it guards
until `ARMING_DELAY_MS` after `start()`; dialogs call `start()` from `showEvent`, and
their shortcut slots check `is_armed()` before doing anything.

A key that is still held when the delay ends (a stuck or auto-repeating Ctrl+Return
from another window) must not count either: while a modifier key is physically down,
the gate waits and arms only once every modifier has been released, and says which key
it waits for (`waiting_for_release`), so the dialog can tell the person to let go.

Nor does the gate arm before the dialog shows everything the person must see: a long
command's findings are worked out in loop turns of their own, and where they are not
there yet when the delay ends, the gate waits for them (`set_ready_check`).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

ARMING_DELAY_MS = 400
HELD_KEY_POLL_MS = 50
_MODIFIER_NAMES = ((Qt.KeyboardModifier.ControlModifier, "Ctrl"),
                   (Qt.KeyboardModifier.ShiftModifier, "Shift"),
                   (Qt.KeyboardModifier.AltModifier, "Alt"),
                   (Qt.KeyboardModifier.MetaModifier, "Meta"))


class ArmingGate(QObject):
    """Keeps a set of widgets disabled until a delay has passed since `start()`.

    A guarded widget is enabled only when the gate is armed *and* its own condition
    (see `guard`) holds, so "armed but the JSON is invalid" keeps Allow disabled.

    Signals:
        armed_changed(bool): the gate armed (True) or was reset/disarmed (False).
        waiting_for_release(str): the delay is over but a key is held: its name
            ("Ctrl", "Ctrl+Shift", or "the held key" when the platform cannot say);
            "" when the gate no longer waits for one.
    """

    armed_changed = Signal(bool)
    waiting_for_release = Signal(str)

    def __init__(self, parent: QObject | None = None, delay_ms: int | None = None) -> None:
        super().__init__(parent)
        self._armed = False
        self._guarded: list[tuple[QWidget, Callable[[], bool]]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._delay_ms = ARMING_DELAY_MS if delay_ms is None else delay_ms
        self._waiting_for = ""
        self._ready: Callable[[], bool] = lambda: True
        self._timer.timeout.connect(self._arm)

    @property
    def delay_ms(self) -> int:
        """The delay between `start()` and arming, in milliseconds."""
        return self._delay_ms

    def guard(self, widget: QWidget, condition: Callable[[], bool] | None = None) -> None:
        """Keep `widget` disabled until armed and `condition()` (if given) is true."""
        self._guarded.append((widget, condition or (lambda: True)))
        self.refresh()

    def set_ready_check(self, ready: Callable[[], bool]) -> None:
        """Arm only once `ready()` is true as well (polled after the delay)."""
        self._ready = ready

    def start(self) -> None:
        """(Re)start the delay: disarm now, arm after `delay_ms`."""
        was_armed = self._armed
        self._armed = False
        self.refresh()
        if was_armed:
            self.armed_changed.emit(False)
        self._timer.start(self._delay_ms)

    def disarm(self) -> None:
        """Disarm for good (the dialog is finished); the timer no longer arms it."""
        self._timer.stop()
        self._set_waiting("")
        was_armed = self._armed
        self._armed = False
        self._guarded.clear()
        if was_armed:
            self.armed_changed.emit(False)

    def is_armed(self) -> bool:
        """True once the delay has passed since the last `start()`."""
        return self._armed

    def refresh(self) -> None:
        """Re-evaluate every guarded widget's enabled state."""
        for widget, condition in self._guarded:
            widget.setEnabled(self._armed and bool(condition()))

    @staticmethod
    def modifiers_held() -> bool:
        """True while the keyboard reports a modifier key down (asks the platform).

        The offscreen platform has no keyboard: its answer is the modifier state of
        the last synthetic event, so it is not asked there.
        """
        if QGuiApplication.platformName() == "offscreen":
            return False
        return QGuiApplication.queryKeyboardModifiers() != Qt.KeyboardModifier.NoModifier

    @staticmethod
    def held_modifier_names() -> str:
        """The modifier keys held now, e.g. "Ctrl+Shift" ("" when none or unknown)."""
        if QGuiApplication.platformName() == "offscreen":
            return ""
        held = QGuiApplication.queryKeyboardModifiers()
        return "+".join(name for flag, name in _MODIFIER_NAMES if held & flag)

    def _arm(self) -> None:
        if self.modifiers_held():
            self._set_waiting(self.held_modifier_names() or "the held key")
            self._timer.start(HELD_KEY_POLL_MS)
            return
        self._set_waiting("")
        if not self._ready():  # (what the person must see is still being worked out)
            self._timer.start(HELD_KEY_POLL_MS)
            return
        self._armed = True
        self.refresh()
        self.armed_changed.emit(True)

    def _set_waiting(self, keys: str) -> None:
        if keys != self._waiting_for:
            self._waiting_for = keys
            self.waiting_for_release.emit(keys)
