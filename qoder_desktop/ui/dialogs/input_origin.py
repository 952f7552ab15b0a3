"""Approving keys and clicks count only from a keyboard or mouse, never injected ones.

On X11 any program of the person's user can press Ctrl+Return or click Allow in our
dialog (XTEST, `xdotool`; or XSendEvent), and the arming delay does not stop a program
that waits for it. `InputOrigin` tells, for the key or click that triggers an approving
action, where it came from:

- While a decision dialog is open it watches the key and mouse events its window gets
  from the platform (an event filter on the dialog's QWindow, which they reach before
  any widget: kind, server time, keycode — the action runs inside that delivery), and
  the X events Qt's own connection reads (a native event filter: which came from the X
  server, and which a client sent with XSendEvent).
- An event from the X server must match an XInput2 raw event from a keyboard or mouse,
  not from XTEST's devices, and no XTEST request seen by RECORD (`ui/x11_input.py`,
  `ui/x11_record.py`); an event sent with XSendEvent never counts.
- An event that never came through X (QTest in tests, this process's own code) is not
  another program's: allowed. So is an action with no input event in flight.
- A key or click injected for sure does not reach the dialog's widgets at all (Escape
  excepted: it denies): no program types into the input a person then approves, picks
  an answer, or moves the focus.

Platforms: only Qt's `xcb` platform is checked. On Wayland a client cannot inject input
into another client; on macOS and Windows the check does not apply (see the README).

When the X server lacks XInput 2.1 or libxcb cannot be loaded (`missing`),
approving keys still work — locking the person out of every approval would be worse —
and every dialog says plainly that injected input cannot be told apart there (a server
without RECORD is only logged: `sourceid` still catches `xdotool` and its like). When the
check was set up but fails later (its connection lost), approving input is refused (fail
closed) and the check is set up again at the next try.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSocketNotifier, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeyEvent, QWindow
from PySide6.QtWidgets import QLabel, QWidget

from qoder_desktop.ui.dialogs.input_events import NativeRecorder, Stamp, stamp_of
from qoder_desktop.ui.x11_input import Origin, RawInputWatch, X11InputUnavailable

log = logging.getLogger(__name__)

REFUSED_KEY = ("Ignored a key press that did not come from a keyboard or mouse "
               "— press it yourself.")
REFUSED_CLICK = "Ignored a click that did not come from a mouse — click it yourself."
UNCHECKED_NOTE = ("⚠ This X display cannot tell keys and clicks you make from ones "
                  "another program injects ({reason}); check that you chose what you mean.")
BROKEN_NOTE = ("Ignored this {what}: could not confirm that it came from a keyboard or "
               "mouse ({reason}). Nothing was allowed; try again.")
START_WITHIN_MS = 100
"""The longest the check waits for a dialog's first frame before it starts anyway."""
_BLOCKED_TYPES = (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress,
                  QEvent.Type.KeyRelease, QEvent.Type.MouseButtonPress,
                  QEvent.Type.MouseButtonRelease, QEvent.Type.MouseButtonDblClick)
"""Events an injected key or click arrives as; none reaches the dialog's widgets."""


@dataclass(frozen=True)
class Verdict:
    """Whether an approving action may go ahead, and what to tell the person if not."""

    allowed: bool
    note: str = ""
    injected: bool = False
    """True when the input was injected for sure (not just unconfirmed)."""


ALLOWED = Verdict(True)


class InputOrigin(QObject):
    """Tells whether the key or click being delivered may approve (one per application).

    Dialogs `attach()` when shown and `detach()` when closed; the filters and the raw
    event watch run only while one is attached. `check()` answers for the approving
    action being run now. Keys and clicks injected for sure never reach an attached
    dialog's widgets at all (Escape excepted: it denies), so no program edits the input
    a person then approves; the dialog is told (`attach`'s `tell`).
    """

    _instance: InputOrigin | None = None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.active = QGuiApplication.platformName() == "xcb"
        """Whether this platform is checked at all (X11 through Qt's xcb platform)."""
        self._watch: RawInputWatch | None = None
        self._notifiers: list[QSocketNotifier] = []
        self._native: NativeRecorder | None = None
        self._missing = ""
        self._attached: dict[int, tuple[QWindow, Callable[[str], None]]] = {}
        """The open dialogs (by id): their windows, whose input is watched, and how to
        tell each that input was ignored."""
        self._running = False
        self._stamp: Stamp | None = None
        self._last: tuple[Stamp, Verdict] | None = None
        """The last stamp checked and its verdict (a key arrives as up to three events)."""
        self._clear = self._timer(self._forget_stamp)
        self._idle = self._timer(self._stop_when_idle)
        self._starter = self._timer(self._start)
        if self.active:
            self._set_up()
            if self._native is None:  # (XSendEvent is still caught without XInput2)
                self._native = NativeRecorder(0)

    @classmethod
    def instance(cls) -> InputOrigin:
        """The application's `InputOrigin` (made on first use)."""
        app = QCoreApplication.instance()
        current = cls._instance
        if current is None or current.parent() is not app:
            current = cls._instance = cls(app)
        return current

    @property
    def unchecked_reason(self) -> str:
        """Why X11 input cannot be checked on this display ("" when it can, or off X11)."""
        return self._missing

    def unchecked_note(self) -> str:
        """The warning a dialog shows where input cannot be checked ("" otherwise)."""
        return UNCHECKED_NOTE.format(reason=self._missing) if self._missing else ""

    def attach(self, dialog: QWidget, tell: Callable[[str], None], *,
               after: Callable[[Callable[[], None]], object] | None = None) -> None:
        """Watch the input `dialog`'s window gets while it is open (from `showEvent`:
        the platform's input events reach the window before its widgets); `tell(note)`
        when an injected key or click was kept from it.

        The check starts a loop turn later, or when `after` calls it back (a decision
        dialog hands over its `when_painted`: on X11 the first frame then does not wait
        for the check's X requests, and the X events before it for its native filter),
        at most `START_WITHIN_MS` after `attach` (a window that never paints).
        """
        key = id(dialog)
        window = dialog.windowHandle()
        if not self.active or key in self._attached or window is None:
            return
        self._attached[key] = (window, tell)
        window.installEventFilter(self)
        dialog.destroyed.connect(lambda _=None: self._release(key))
        if self._running:
            return
        if after is None:
            self._starter.start(0)  # (a loop turn later)
        else:
            after(self._start)
            self._starter.start(START_WITHIN_MS)

    def is_checking(self) -> bool:
        """True when an approving key or click can be judged now: always off X11; on X11
        once the check has started (decision dialogs arm only then)."""
        return not self.active or self._running

    def detach(self, dialog: QWidget) -> None:
        """`dialog` closed: stop watching when no other one is open (a loop turn later,
        off the path that hides it)."""
        self._release(id(dialog))

    def check(self, dialog: QWidget) -> Verdict:
        """Whether the key or click being delivered now to `dialog` may approve."""
        if not self.active:
            return ALLOWED
        if id(dialog) not in self._attached:  # (shown dialogs are: this is a bug)
            log.error("an approving action in a dialog whose input is not watched")
            return Verdict(False, BROKEN_NOTE.format(what="key press or click",
                                                     reason="its window is not watched"))
        if not self._running:  # (armed within a loop turn of showing: never at 400 ms)
            self._start()
            return Verdict(False, BROKEN_NOTE.format(what="key press or click",
                                                     reason="the check was starting"))
        if self._stamp is None:
            return ALLOWED  # (no input event from the window: code in this process)
        return self._verdict(self._stamp)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Note the key or mouse event a watched window gets; keep it from the dialog
        when it was injected for sure, or when the check has not started yet (the ~ms
        between a dialog's show and its first frame: no person acts that fast), Escape
        excepted."""
        stamp = stamp_of(event)
        if stamp is None:
            return False
        self._stamp = stamp
        self._clear.start()  # (forgotten once this event's delivery is over)
        if (event.type() not in _BLOCKED_TYPES
                or (isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape)):
            return False
        if not self._running:  # shown, the check not started yet: nothing can judge it
            if event.type() == QEvent.Type.ShortcutOverride:
                event.accept()  # (taken: no shortcut runs for it)
            return True
        verdict = self._verdict(stamp)
        if not verdict.injected:
            return False
        if event.type() == QEvent.Type.ShortcutOverride:
            event.accept()  # (taken: no shortcut runs for it)
        for window, tell in list(self._attached.values()):
            if window is watched:
                tell(verdict.note)
        return True

    # -- internals -------------------------------------------------------------------
    def _timer(self, then: Callable[[], None]) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(0)
        timer.timeout.connect(then)
        return timer

    def _verdict(self, stamp: Stamp) -> Verdict:
        if self._last is not None and self._last[0] == stamp:
            return self._last[1]
        verdict = self._judge(stamp)
        self._last = (stamp, verdict)
        return verdict

    def _judge(self, stamp: Stamp) -> Verdict:
        """Where the event `stamp` came from, as a verdict for approving with it."""
        sent = self._native.find(stamp) if self._native is not None else None
        if sent is None and not (stamp.kind.is_key and stamp.code):
            return ALLOWED  # never came through X: QTest, this process's own
        refused = REFUSED_KEY if stamp.kind.is_key else REFUSED_CLICK
        if sent:
            log.warning("ignored a %s sent by another X client (XSendEvent)", stamp.what())
            return Verdict(False, refused, injected=True)
        if self._missing:
            return ALLOWED
        if self._watch is None:
            self._set_up(retry=True)
            return self._unconfirmed(stamp, "the check was not running; it is now"
                                     if self._watch is not None
                                     else "no connection to the X display")
        try:
            origin = self._watch.origin(stamp.kind, stamp.time, stamp.code)
        except Exception as exc:  # (X11InputUnavailable, or anything unforeseen)
            self._drop_watch()  # (set up again at the next try)
            return self._unconfirmed(stamp, str(exc) or type(exc).__name__)
        if origin is Origin.DEVICE:
            return ALLOWED
        if origin is Origin.UNKNOWN:
            return self._unconfirmed(stamp, "the X server reported no device for it")
        log.warning("ignored a %s that did not come from a keyboard or mouse", stamp.what())
        return Verdict(False, refused, injected=True)

    @staticmethod
    def _unconfirmed(stamp: Stamp, reason: str) -> Verdict:
        log.warning("could not confirm where a %s came from (%s)", stamp.what(), reason)
        return Verdict(False, BROKEN_NOTE.format(what=stamp.what(), reason=reason))

    def _forget_stamp(self) -> None:
        self._stamp = self._last = None

    def _set_up(self, *, retry: bool = False) -> None:
        try:
            watch = RawInputWatch.open()
        except X11InputUnavailable as exc:
            if exc.missing:
                self._missing = str(exc)
                log.warning("X11 input cannot be checked for injected keys and clicks: %s",
                            exc)
            else:
                log.warning("could not set up the X11 input check: %s", exc)
            return
        self._watch = watch
        self._missing = ""
        if self._native is None:
            self._native = NativeRecorder(watch.xi_opcode)
        self._native.xi_opcode = watch.xi_opcode
        if retry and self._running:
            self._start_watch()

    def _start(self) -> None:
        self._starter.stop()
        app = QCoreApplication.instance()
        if app is None or self._running or not self._attached:
            return
        self._running = True
        if self._native is not None:
            app.installNativeEventFilter(self._native)
        if self._watch is None and not self._missing:
            self._set_up()  # (dropped after a failure, e.g. while it stopped: again now)
        self._start_watch()

    def _start_watch(self) -> None:
        if self._watch is None:
            return
        try:
            self._watch.start()
        except X11InputUnavailable as exc:
            log.warning("could not start the X11 input check: %s", exc)
            self._drop_watch()
            return
        for socket in self._watch.filenos():
            notifier = QSocketNotifier(socket, QSocketNotifier.Type.Read, self)
            notifier.activated.connect(self._read)
            self._notifiers.append(notifier)

    def _stop_when_idle(self) -> None:
        if self._attached or not self._running:
            return
        self._running = False
        app = QCoreApplication.instance()
        if app is not None and self._native is not None:
            app.removeNativeEventFilter(self._native)
            self._native.seen.clear()
        self._stamp = self._last = None
        self._drop_notifiers()
        if self._watch is not None:
            try:
                self._watch.stop()
            except X11InputUnavailable:
                self._drop_watch()

    def _release(self, key: int) -> None:
        attached = self._attached.pop(key, None)
        if attached is None:
            return
        with contextlib.suppress(RuntimeError):  # (the window may be gone already)
            attached[0].removeEventFilter(self)
        if not self._attached:
            self._idle.start()

    def _read(self) -> None:
        if self._watch is None:
            return
        try:
            self._watch.read()
        except X11InputUnavailable as exc:
            log.warning("the X11 input check lost its connection: %s", exc)
            self._drop_watch()
            self._set_up(retry=True)  # (a check that fails later refuses; see `check`)

    def _drop_notifiers(self) -> None:
        for notifier in self._notifiers:
            notifier.setEnabled(False)
            notifier.deleteLater()
        self._notifiers.clear()

    def _drop_watch(self) -> None:
        self._drop_notifiers()
        if self._watch is not None:
            self._watch.close()
            self._watch = None


class InputNote(QLabel):
    """A dialog's line saying an approving key or click was ignored (and why), or that
    this display cannot tell injected input apart; hidden while there is nothing to say."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("inputOriginNote")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.hide()

    def allows(self, verdict: Verdict) -> bool:
        """Whether `verdict` lets the action go ahead; shows its note when not."""
        if not verdict.allowed:
            self.tell(verdict.note)
        return verdict.allowed

    def tell(self, note: str) -> None:
        """Show `note` (input kept from the dialog)."""
        self.setText(note)
        self.show()

    def warn(self, warning: str) -> None:
        """Show `warning` (the display cannot be checked) unless a note is shown already."""
        if warning and not self.text():
            self.setText(warning)
            self.show()
