"""Where an X11 key press or click came from: a keyboard or mouse, or injected (XTEST).

Any program of the person's user can inject keys and clicks into another X client with
the XTEST extension (`xdotool key ctrl+Return`). The X server attributes that input to
its "XTEST" slave devices ("Virtual core XTEST keyboard" / "… XTEST pointer"), and
XInput2's raw events say for each key and button which slave device it came from
(`sourceid`). `RawInputWatch` is a second X connection (`ui/xcb.py`, not Qt's) that
records those raw events on the root window; `origin()` finds the one with a Qt event's server
time and keycode and says whether its device is an XTEST device.

No Qt here: the Qt side (`ui/dialogs/input_origin.py`) asks this module. Raw events are
kept by server time (`RecentByTime`), and only while a decision dialog is open.
"""

from __future__ import annotations

import enum
import logging
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from qoder_desktop.ui.xcb import GET_INPUT_FOCUS, Connection, XcbError

if TYPE_CHECKING:
    from qoder_desktop.ui.x11_record import XTestRecorder

log = logging.getLogger(__name__)
T = TypeVar("T")

XI_EXTENSION = "XInputExtension"
XTEST_PROPERTY = "XTEST Device"
"""The device property the X server sets (read-only) on its XTEST slave devices."""
_ALL_MASTER_DEVICES = 1
_ALL_DEVICES = 0
_SLAVE_TYPES = (3, 4, 5)  # SlavePointer, SlaveKeyboard, FloatingSlave
_XI_SELECT_EVENTS, _XI_QUERY_VERSION, _XI_QUERY_DEVICE, _XI_GET_PROPERTY = 46, 47, 48, 59
_RAW_MASK = sum(1 << kind for kind in (13, 14, 15, 16))
"""XI2's event mask bits of RawKeyPress, RawKeyRelease, RawButtonPress, RawButtonRelease."""


class InputKind(enum.IntEnum):
    """A key or button event, numbered as XInput2's raw event types."""

    KEY_PRESS = 13
    KEY_RELEASE = 14
    BUTTON_PRESS = 15
    BUTTON_RELEASE = 16

    @property
    def is_key(self) -> bool:
        """True for a key event (its detail is the keycode)."""
        return self in (InputKind.KEY_PRESS, InputKind.KEY_RELEASE)


class Origin(enum.Enum):
    """What a key press or click is, as far as the X server tells."""

    DEVICE = "device"
    """From a keyboard or mouse (a slave device that is not XTEST's)."""
    INJECTED = "injected"
    """Injected by a program (an XTEST device, or an event sent with XSendEvent)."""
    UNKNOWN = "unknown"
    """No raw event matched, or its device is unknown: not proven to be a person's."""


@dataclass(frozen=True)
class RawInput:
    """One XInput2 raw key/button event: its kind, server time, detail and source device."""

    kind: InputKind
    time: int
    detail: int
    source: int


@dataclass(frozen=True)
class Device:
    """An X input device as XIQueryDevice lists it."""

    id: int
    name: str
    xtest: bool
    """True for the server's XTEST devices (the ones injected input is attributed to)."""


class X11InputUnavailable(Exception):
    """The check cannot run on this display; `missing` when the server lacks XInput 2.1+
    (a property of the display), not when a connection failed."""

    def __init__(self, reason: str, *, missing: bool = False) -> None:
        super().__init__(reason)
        self.missing = missing


def is_xtest_name(name: str) -> bool:
    """True for the name the X server gives an XTEST device ("<master> XTEST keyboard")."""
    return name.endswith((" XTEST keyboard", " XTEST pointer"))


def parse_raw_event(event: bytes, xi_opcode: int) -> RawInput | None:
    """The raw key or button event in `event` (as libxcb hands an XGE event over), or
    None for any other event: its device is the slave it came from (`sourceid`), or the
    one it is reported on where the server gave no source."""
    if len(event) < 32 or event[0] & 0x7F != 35 or event[1] != xi_opcode:
        return None
    event_type, device, time, detail, source = struct.unpack_from("=8xHHIIH", event)
    if event_type not in InputKind._value2member_map_:
        return None
    return RawInput(InputKind(event_type), time, detail, source or device)


def parse_devices(reply: bytes) -> list[tuple[int, int, str]]:
    """The devices in an XIQueryDevice reply: (id, type, name) each."""
    (count,) = struct.unpack_from("=8xH", reply)
    devices, offset = [], 32
    for _ in range(count):
        device, kind, _attached, classes, name_len = struct.unpack_from("=HHHHH", reply,
                                                                         offset)
        name = reply[offset + 12:offset + 12 + name_len].decode("utf-8", "replace")
        offset += 12 + (name_len + 3) // 4 * 4
        for _ in range(classes):  # (each class says its own length, in 4-byte words)
            offset += 4 * struct.unpack_from("=H", reply, offset + 2)[0]
        devices.append((device, kind, name))
    return devices


def classify(events: Iterable[RawInput], devices: Mapping[int, Device], kind: InputKind,
             time: int, detail: int | None) -> Origin:
    """Where the event of `kind` at server `time` (with `detail`, when given) came from.

    Every raw event that matches counts: one from an XTEST device makes it INJECTED
    (stricter is safe), one from a device not in `devices` makes it UNKNOWN, and none
    matching is UNKNOWN too. Buttons are matched without their number: a raw event
    carries the physical button, the Qt event the mapped one (a left-handed mouse).
    """
    matching = [event for event in events
                if event.kind is kind and event.time == time
                and (detail is None or event.detail == detail)]
    if not matching:
        return Origin.UNKNOWN
    sources = [devices.get(event.source) for event in matching]
    if any(device is not None and device.xtest for device in sources):
        return Origin.INJECTED
    if any(device is None for device in sources):
        return Origin.UNKNOWN
    return Origin.DEVICE


class RecentByTime(Generic[T]):
    """Values kept by X server time until `window_ms` past the newest.

    Kept by time, not by count: a flood of events (however many) spans only a few
    milliseconds, so it cannot push out the one a check is about to look up.
    """

    def __init__(self, window_ms: int = 10_000) -> None:
        self._window = window_ms
        self._buckets: dict[int, set[T]] = {}
        self._newest = 0

    def add(self, time: int, value: T) -> None:
        """Keep `value` at `time` (dropping what is older than the window)."""
        if time > self._newest or self._newest - time > 1 << 31:  # (the 32-bit time wraps)
            if self._newest - time > 1 << 31:
                self._buckets.clear()
            self._newest = time
        self._buckets.setdefault(time, set()).add(value)
        if len(self._buckets) > 512:
            oldest = self._newest - self._window
            self._buckets = {t: v for t, v in self._buckets.items() if t >= oldest}

    def near(self, time: int, ms: int = 0) -> list[T]:
        """The values kept at `time` ± `ms`."""
        return [value for t in range(time - ms, time + ms + 1)
                for value in self._buckets.get(t, ())]

    def values(self) -> list[T]:
        """Every value kept."""
        return [value for bucket in self._buckets.values() for value in bucket]

    def clear(self) -> None:
        """Forget everything."""
        self._buckets.clear()
        self._newest = 0


class RawInputWatch:
    """A second X connection that records XInput2 raw key and button events.

    `open()` connects and checks XInput 2.1+ (raising `X11InputUnavailable`); `start()`
    selects the raw events on the root window, `stop()` deselects them and forgets what
    was recorded; `read()` takes what arrived (call it when `fileno()` is readable);
    `origin()` answers for one event. A connection lost later raises
    `X11InputUnavailable` from `origin()`: the caller refuses (fail closed).
    """

    def __init__(self, conn: Connection, xi_opcode: int,
                 recorder: XTestRecorder | None = None) -> None:
        self._conn = conn
        self.xi_opcode = xi_opcode
        """The XInputExtension's major opcode (Qt's connection sees the same)."""
        self._events: RecentByTime[RawInput] = RecentByTime()
        """Kept by time, not count: no flood of events pushes out the one looked for."""
        self._devices: dict[int, Device] = {}
        self._xtest_atom = 0
        self._selected = False
        self.recorder = recorder
        """XTEST's requests (RECORD), for keys XTEST attributes to a real device; None
        where the server has no RECORD."""

    @classmethod
    def open(cls, display: str | None = None) -> RawInputWatch:
        """Connect to `display` (default: $DISPLAY) and check for XInput 2.1+."""
        conn = connect(display)
        try:
            ext = conn.query_extension(XI_EXTENSION.encode())
            if not ext.present:
                raise X11InputUnavailable("the X server has no XInput extension",
                                          missing=True)
            version = struct.unpack_from("=8xHH", conn.call(
                ext.major_opcode, _XI_QUERY_VERSION, struct.pack("=HH", 2, 2)))
            if version < (2, 1):
                raise X11InputUnavailable(
                    f"the X server has XInput {version[0]}.{version[1]}, not 2.1 or later",
                    missing=True)
            watch = cls(conn, ext.major_opcode, _open_recorder(display))
            watch._xtest_atom = conn.intern_atom(XTEST_PROPERTY.encode(), only_if_exists=True)
            watch._load_devices()
        except X11InputUnavailable:
            conn.disconnect()
            raise
        except Exception as exc:
            conn.disconnect()
            raise X11InputUnavailable(f"the X server did not answer ({exc})") from exc
        return watch

    def filenos(self) -> list[int]:
        """The sockets to watch: call `read()` when one is readable."""
        sockets = [self._conn.fileno()]
        if self.recorder is not None:
            sockets.append(self.recorder.fileno())
        return sockets

    def devices(self) -> dict[int, Device]:
        """The input devices known now, by id."""
        return dict(self._devices)

    def recorded(self) -> list[RawInput]:
        """The raw events recorded (and not yet forgotten), oldest first."""
        return sorted(self._events.values(), key=lambda event: event.time)

    def start(self) -> None:
        """Record raw key and button events (and XTEST's requests) from now on."""
        self._select(True)
        if self.recorder is not None:
            self.recorder.start()

    def stop(self) -> None:
        """Stop recording and forget what was recorded."""
        if self.recorder is not None:
            self.recorder.stop()
        self._select(False)
        self.read()
        self._events.clear()

    def read(self) -> None:
        """Take the events (and XTEST requests) that arrived; never blocks."""
        try:
            while (event := self._conn.poll_event()) is not None:
                if event[0] == 0:  # (an error of an unchecked request)
                    log.debug("an X error on the input-check connection: %d", event[1])
                    continue
                raw = parse_raw_event(event, self.xi_opcode)
                if raw is not None and self._selected:
                    self._events.add(raw.time, raw)
        except XcbError as exc:  # (closed)
            raise X11InputUnavailable(f"the X connection was lost ({exc})") from exc
        if self._conn.has_error():
            raise X11InputUnavailable("the X connection was lost")
        if self.recorder is not None:
            self.recorder.read()

    def origin(self, kind: InputKind, time: int, detail: int | None) -> Origin:
        """Where the event of `kind` at `time` came from (keys: `detail` is the keycode).

        A round trip first: the X server sends the raw event before it answers, so a
        key Qt holds now has its raw event here after the reply.
        """
        try:
            self._conn.call(GET_INPUT_FOCUS)
        except XcbError as exc:
            raise X11InputUnavailable(f"the X connection was lost ({exc})") from exc
        self.read()
        events = self._events.near(time)
        if any(e.source not in self._devices for e in events if e.time == time):
            try:
                self._load_devices()  # (a device plugged in since)
            except Exception as exc:
                raise X11InputUnavailable(f"could not list the input devices ({exc})") from exc
        origin = classify(events, self._devices, kind, time, detail)
        if origin is Origin.DEVICE and self.recorder is not None and self.recorder.injected(
                kind, time, detail if kind.is_key else None):
            return Origin.INJECTED  # (XTEST's device path: attributed to a real device)
        return origin

    def close(self) -> None:
        """Close the connection (and the recorder's)."""
        if self.recorder is not None:
            self.recorder.close()
        self._conn.disconnect()

    # -- internals -------------------------------------------------------------------
    def _select(self, on: bool) -> None:
        mask = struct.pack("=IH2xHHI", self._conn.root, 1, _ALL_MASTER_DEVICES, 1,
                           _RAW_MASK if on else 0)
        try:  # (no round trip: a selection that failed leaves no raw event, so refuses)
            self._conn.send(self.xi_opcode, _XI_SELECT_EVENTS, mask)
            self._conn.flush()
        except XcbError as exc:
            raise X11InputUnavailable(f"could not select raw input events ({exc})") from exc
        self._selected = on

    def _load_devices(self) -> None:
        """The devices and which are XTEST's: by name, or by the property the server
        sets on them (asked of every slave at once: one round trip, not one each)."""
        conn, xi = self._conn, self.xi_opcode
        infos = parse_devices(conn.call(xi, _XI_QUERY_DEVICE,
                                        struct.pack("=H2x", _ALL_DEVICES)))
        names = {device: name for device, _, name in infos}
        asked = {device: conn.send(xi, _XI_GET_PROPERTY,  # (any type, offset 0, 1 item)
                                   struct.pack("=HBxIIII", device, 0, self._xtest_atom,
                                               0, 0, 1), reply=True)
                 for device, kind, _ in infos if kind in _SLAVE_TYPES and self._xtest_atom}
        marked = {device for device, sequence in asked.items()
                  if struct.unpack_from("=16xI", conn.reply(sequence))[0]}
        self._devices = {device: Device(device, name, is_xtest_name(name) or device in marked)
                         for device, name in names.items()}


def connect(display: str | None) -> Connection:
    """A connection of the check's own to `display`.

    Raises:
        X11InputUnavailable: `missing` when libxcb cannot be loaded.
    """
    try:
        return Connection.connect(display)
    except OSError as exc:  # (libxcb.so.1 not found)
        raise X11InputUnavailable(f"the XCB library could not be loaded ({exc})",
                                  missing=True) from exc
    except XcbError as exc:
        raise X11InputUnavailable(str(exc)) from exc


def _open_recorder(display: str | None) -> XTestRecorder | None:
    """The XTEST recorder, or None (logged) where the server has no RECORD extension."""
    from qoder_desktop.ui.x11_record import XTestRecorder

    try:
        return XTestRecorder.open(display)
    except X11InputUnavailable as exc:
        if not exc.missing:
            raise
        log.warning("keys XTEST attributes to a real device cannot be told apart: %s", exc)
        return None
