"""The key and mouse events a decision dialog gets, as the input check sees them.

`stamp_of` makes a Qt key or mouse event into a `Stamp` (kind, X server time, keycode);
`NativeRecorder`, a native event filter on Qt's X connection, notes which key and
button events came from the X server at all and which a client sent with XSendEvent.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from PySide6.QtCore import QAbstractNativeEventFilter, QByteArray, QEvent
from PySide6.QtGui import QKeyEvent, QMouseEvent

from qoder_desktop.ui.x11_input import InputKind, RecentByTime

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


def stamp_of(event: QEvent) -> Stamp | None:
    """The stamp of a key or mouse button event (None for any other event)."""
    kind_of = event.type()
    if kind_of in _KEY_TYPES and isinstance(event, QKeyEvent):
        return Stamp(_KEY_TYPES[kind_of], event.timestamp(), event.nativeScanCode())
    if kind_of in _MOUSE_TYPES and isinstance(event, QMouseEvent):
        return Stamp(_MOUSE_TYPES[kind_of], event.timestamp(), None)
    return None


class NativeRecorder(QAbstractNativeEventFilter):
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
