"""The key and mouse events a decision dialog gets, as the input check sees them: Qt
events become stamps (kind, server time, keycode), and the X events Qt's connection
reads are noted with whether a client forged them with XSendEvent."""

from __future__ import annotations

import ctypes

from PySide6.QtCore import QByteArray, QEvent, QPointF, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPointingDevice
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.dialogs.input_events import NativeRecorder, Stamp, stamp_of
from qoder_desktop.ui.x11_input import InputKind

XI_OPCODE = 131


def key_event(kind: QEvent.Type, scan_code: int, time: int) -> QKeyEvent:
    event = QKeyEvent(kind, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier, scan_code, 0, 0,
                      "\r")
    event.setTimestamp(time)
    return event


def mouse_event(kind: QEvent.Type, time: int) -> QMouseEvent:
    event = QMouseEvent(kind, QPointF(3, 3), QPointF(3, 3), Qt.MouseButton.LeftButton,
                        Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                        QPointingDevice.primaryPointingDevice())
    event.setTimestamp(time)
    return event


def test_key_and_mouse_events_become_stamps(qtbot: QtBot) -> None:
    assert stamp_of(key_event(QEvent.Type.KeyPress, 36, 1000)) == Stamp(
        InputKind.KEY_PRESS, 1000, 36)
    assert stamp_of(key_event(QEvent.Type.KeyRelease, 36, 1001)) == Stamp(
        InputKind.KEY_RELEASE, 1001, 36)
    click = stamp_of(mouse_event(QEvent.Type.MouseButtonPress, 2000))
    assert click == Stamp(InputKind.BUTTON_PRESS, 2000, None)
    assert stamp_of(mouse_event(QEvent.Type.MouseButtonRelease, 2001)).kind is (  # type: ignore[union-attr]
        InputKind.BUTTON_RELEASE)
    assert click is not None and click.what() == "click"
    assert Stamp(InputKind.KEY_PRESS, 1, 36).what() == "key press"


def test_other_events_have_no_stamp(qtbot: QtBot) -> None:
    assert stamp_of(QEvent(QEvent.Type.FocusIn)) is None
    assert stamp_of(mouse_event(QEvent.Type.MouseMove, 5)) is None


def core_event(code: int, time: int, *, sent: bool) -> ctypes.Array[ctypes.c_char]:
    """An xcb core key/button event as it sits in memory (32 bytes)."""
    raw = bytearray(32)
    raw[0] = code | (0x80 if sent else 0)
    raw[4:8] = time.to_bytes(4, "little")
    return ctypes.create_string_buffer(bytes(raw), 32)


def xi_event(xi_type: int, time: int, opcode: int = XI_OPCODE) -> ctypes.Array[ctypes.c_char]:
    """An xcb XInput2 device event (a generic event of the XInput extension)."""
    raw = bytearray(32)
    raw[0], raw[1] = 35, opcode
    raw[8:10] = xi_type.to_bytes(2, "little")
    raw[12:16] = time.to_bytes(4, "little")
    return ctypes.create_string_buffer(bytes(raw), 32)


def feed(recorder: NativeRecorder, buffer: ctypes.Array[ctypes.c_char],
         event_type: object = b"xcb_generic_event_t") -> None:
    assert recorder.nativeEventFilter(event_type, ctypes.addressof(buffer)) == (False, 0)


def test_a_key_forged_with_xsendevent_is_told_apart_from_a_real_one() -> None:
    recorder = NativeRecorder(XI_OPCODE)
    feed(recorder, core_event(2, 500, sent=True))
    feed(recorder, core_event(4, 600, sent=False))
    assert recorder.find(Stamp(InputKind.KEY_PRESS, 500, 36)) is True
    assert recorder.find(Stamp(InputKind.BUTTON_PRESS, 600, None)) is False
    assert recorder.find(Stamp(InputKind.KEY_RELEASE, 500, 36)) is None  # another kind
    assert recorder.find(Stamp(InputKind.KEY_PRESS, 700, 36)) is None  # nothing then


def test_xinput2_device_events_count_as_real_input() -> None:
    recorder = NativeRecorder(XI_OPCODE)
    feed(recorder, xi_event(3, 800), QByteArray(b"xcb_generic_event_t"))
    assert recorder.find(Stamp(InputKind.KEY_RELEASE, 800, 36)) is False
    feed(recorder, xi_event(3, 900, opcode=XI_OPCODE + 1))  # another extension's event
    feed(recorder, xi_event(17, 950))  # an XInput2 event that is no key or button
    assert recorder.find(Stamp(InputKind.KEY_RELEASE, 900, 36)) is None
    assert recorder.seen.near(950) == []


def test_events_of_other_native_types_are_not_read() -> None:
    recorder = NativeRecorder(XI_OPCODE)
    feed(recorder, core_event(2, 500, sent=True), b"windows_generic_MSG")
    assert recorder.find(Stamp(InputKind.KEY_PRESS, 500, 36)) is None
