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

Platforms: only Qt's `xcb` platform is checked. On Wayland a client cannot inject input
into another client; on macOS and Windows the check does not apply (see the README).

When the X server lacks XInput 2.1 or the XCB binding cannot be loaded (`missing`),
approving keys still work — locking the person out of every approval would be worse —
and every dialog says plainly that injected input cannot be told apart there (a server
without RECORD is only logged: `sourceid` still catches `xdotool` and its like). When the
check was set up but fails later (its connection lost), approving input is refused (fail
closed) and the check is set up again at the next try.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractNativeEventFilter,
    QByteArray,
    QCoreApplication,
    QEvent,
    QObject,
    QSocketNotifier,
    Qt,
    QTimer,
)
from PySide6.QtGui import QGuiApplication, QKeyEvent, QMouseEvent, QWindow
from PySide6.QtWidgets import QLabel, QWidget

from qoder_desktop.ui.x11_input import (
    InputKind,
    Origin,
    RawInputWatch,
    RecentByTime,
    X11InputUnavailable,
)

log = logging.getLogger(__name__)

REFUSED_KEY = ("Ignored a key press that did not come from a keyboard or mouse "
               "— press it yourself.")
REFUSED_CLICK = "Ignored a click that did not come from a mouse — click it yourself."
UNCHECKED_NOTE = ("⚠ This X display cannot tell keys and clicks you make from ones "
                  "another program injects ({reason}); check that you chose what you mean.")
BROKEN_NOTE = ("Ignored this {what}: could not confirm that it came from a keyboard or "
               "mouse ({reason}). Nothing was allowed; try again.")

_KEY_TYPES = {QEvent.Type.KeyPress: InputKind.KEY_PRESS,
              QEvent.Type.ShortcutOverride: InputKind.KEY_PRESS,
              QEvent.Type.KeyRelease: InputKind.KEY_RELEASE}
_MOUSE_TYPES = {QEvent.Type.MouseButtonPress: InputKind.BUTTON_PRESS,
                QEvent.Type.MouseButtonDblClick: InputKind.BUTTON_PRESS,
                QEvent.Type.MouseButtonRelease: InputKind.BUTTON_RELEASE}
_CORE_TYPES = {2: InputKind.KEY_PRESS, 3: InputKind.KEY_RELEASE,
               4: InputKind.BUTTON_PRESS, 5: InputKind.BUTTON_RELEASE}
"""X core event codes (KeyPress … ButtonRelease) to kinds."""
_XI_TYPES = {2: InputKind.KEY_PRESS, 3: InputKind.KEY_RELEASE,
             4: InputKind.BUTTON_PRESS, 5: InputKind.BUTTON_RELEASE}
"""XInput2 device event types (XI_KeyPress … XI_ButtonRelease) to kinds."""
_GENERIC_EVENT = 35


@dataclass(frozen=True)
class Stamp:
    """A key or mouse event: its kind, server time and keycode (None for a button)."""

    kind: InputKind
    time: int
    code: int | None

    def what(self) -> str:
        """ "key press" or "click", for the person."""
        return "key press" if self.kind.is_key else "click"


@dataclass(frozen=True)
class Verdict:
    """Whether an approving action may go ahead, and what to tell the person if not."""

    allowed: bool
    note: str = ""


class _NativeRecorder(QAbstractNativeEventFilter):
    """Records the key/button events Qt's X connection reads: kind, time, whether sent
    by a client (XSendEvent). Kept by time (`RecentByTime`): no flood pushes one out."""

    def __init__(self, xi_opcode: int) -> None:
        super().__init__()
        self.xi_opcode = xi_opcode
        self.seen: RecentByTime[tuple[InputKind, bool]] = RecentByTime()

    def nativeEventFilter(self, event_type: QByteArray | bytes | bytearray | memoryview,
                          message: int) -> object:
        """Note key and button events; never filters anything out."""
        if isinstance(event_type, QByteArray):
            event_type = event_type.data()
        if bytes(event_type) == b"xcb_generic_event_t":
            self._note(int(message))
        return False, 0

    def _note(self, address: int) -> None:
        head = ctypes.string_at(address, 16)
        code = head[0] & 0x7F
        if code in _CORE_TYPES:
            self.seen.add(int.from_bytes(head[4:8], "little"),
                          (_CORE_TYPES[code], bool(head[0] & 0x80)))
        elif code == _GENERIC_EVENT and head[1] == self.xi_opcode:
            kind = _XI_TYPES.get(int.from_bytes(head[8:10], "little"))
            if kind is not None:
                self.seen.add(int.from_bytes(head[12:16], "little"), (kind, False))

    def find(self, stamp: Stamp) -> bool | None:
        """None when Qt's connection read no X event like `stamp`; else whether one
        like it was sent by a client (XSendEvent)."""
        sent = [was_sent for kind, was_sent in self.seen.near(stamp.time)
                if kind is stamp.kind]
        return any(sent) if sent else None


class InputOrigin(QObject):
    """Tells whether the key or click being delivered may approve (one per application).

    Dialogs `attach()` when shown and `detach()` when closed; the filters and the raw
    event watch run only while one is attached. `check()` answers for the approving
    action being run now.
    """

    _instance: InputOrigin | None = None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.active = QGuiApplication.platformName() == "xcb"
        """Whether this platform is checked at all (X11 through Qt's xcb platform)."""
        self._watch: RawInputWatch | None = None
        self._notifiers: list[QSocketNotifier] = []
        self._native: _NativeRecorder | None = None
        self._missing = ""
        self._attached: dict[int, QWindow] = {}
        """The open dialogs (by id) and their windows, whose input events are watched."""
        self._running = False
        self._stamp: Stamp | None = None
        self._clear = QTimer(self)
        self._clear.setSingleShot(True)
        self._clear.setInterval(0)
        self._clear.timeout.connect(self._forget_stamp)
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.setInterval(0)
        self._idle.timeout.connect(self._stop_when_idle)
        self._starter = QTimer(self)
        self._starter.setSingleShot(True)
        self._starter.setInterval(0)
        self._starter.timeout.connect(self._start)
        if self.active:
            self._set_up()
            if self._native is None:  # (XSendEvent is still caught without XInput2)
                self._native = _NativeRecorder(0)

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

    def attach(self, dialog: QWidget) -> None:
        """Watch the input `dialog`'s window gets while it is open (from `showEvent`:
        the input events from the platform reach the window before its widgets)."""
        key = id(dialog)
        window = dialog.windowHandle()
        if not self.active or key in self._attached or window is None:
            return
        self._attached[key] = window
        window.installEventFilter(self)
        dialog.destroyed.connect(lambda _=None: self._release(key))
        if not self._running:
            self._starter.start()  # (a loop turn later: off the path to the first frame)

    def detach(self, dialog: QWidget) -> None:
        """`dialog` closed: stop watching when no other one is open (a loop turn later,
        off the path that hides it)."""
        self._release(id(dialog))

    def check(self, dialog: QWidget) -> Verdict:
        """Whether the key or click being delivered now to `dialog` may approve."""
        if not self.active:
            return Verdict(True)
        stamp = self._stamp
        if id(dialog) not in self._attached:  # (shown dialogs are: this is a bug)
            log.error("an approving action in a dialog whose input is not watched")
            return Verdict(False, BROKEN_NOTE.format(what="key press or click",
                                                     reason="its window is not watched"))
        if not self._running:  # (armed within a loop turn of showing: never at 400 ms)
            self._start()
            return Verdict(False, BROKEN_NOTE.format(what="key press or click",
                                                     reason="the check was starting"))
        if stamp is None:
            return Verdict(True)  # (no input event from the window: code in this process)
        sent = self._native.find(stamp) if self._native is not None else None
        if sent is None and not (stamp.kind.is_key and stamp.code):
            return Verdict(True)  # never came through X: QTest, this process's own
        refused = REFUSED_KEY if stamp.kind.is_key else REFUSED_CLICK
        if sent:
            log.warning("refused a %s sent by another X client (XSendEvent)", stamp.what())
            return Verdict(False, refused)
        if self._missing:
            return Verdict(True)
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
            return Verdict(True)
        if origin is Origin.UNKNOWN:
            return self._unconfirmed(stamp, "the X server reported no device for it")
        log.warning("refused a %s that did not come from a keyboard or mouse (%s)",
                    stamp.what(), origin.value)
        return Verdict(False, refused)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Note the key or mouse event a watched window gets (kind, time and keycode)."""
        kind_of = event.type()
        if kind_of in _KEY_TYPES and isinstance(event, QKeyEvent):
            self._set_stamp(Stamp(_KEY_TYPES[kind_of], event.timestamp(),
                                  event.nativeScanCode()))
        elif kind_of in _MOUSE_TYPES and isinstance(event, QMouseEvent):
            self._set_stamp(Stamp(_MOUSE_TYPES[kind_of], event.timestamp(), None))
        return False

    # -- internals -------------------------------------------------------------------
    @staticmethod
    def _unconfirmed(stamp: Stamp, reason: str) -> Verdict:
        log.warning("refused a %s: could not confirm where it came from (%s)",
                    stamp.what(), reason)
        return Verdict(False, BROKEN_NOTE.format(what=stamp.what(), reason=reason))

    def _set_stamp(self, stamp: Stamp) -> None:
        self._stamp = stamp
        self._clear.start()  # (forgotten once this event's delivery is over)

    def _forget_stamp(self) -> None:
        self._stamp = None

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
            self._native = _NativeRecorder(watch.xi_opcode)
        self._native.xi_opcode = watch.xi_opcode
        if retry and self._running:
            self._start_watch()

    def _start(self) -> None:
        app = QCoreApplication.instance()
        if app is None or self._running or not self._attached:
            return
        self._running = True
        if self._native is not None:
            app.installNativeEventFilter(self._native)
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
        self._stamp = None
        self._drop_notifiers()
        if self._watch is not None:
            try:
                self._watch.stop()
            except X11InputUnavailable:
                self._drop_watch()

    def _release(self, key: int) -> None:
        window = self._attached.pop(key, None)
        if window is None:
            return
        with contextlib.suppress(RuntimeError):  # (the window may be gone already)
            window.removeEventFilter(self)
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
            self.setText(verdict.note)
            self.show()
        return verdict.allowed

    def warn(self, warning: str) -> None:
        """Show `warning` (the display cannot be checked) unless a note is shown already."""
        if warning and not self.text():
            self.setText(warning)
            self.show()
