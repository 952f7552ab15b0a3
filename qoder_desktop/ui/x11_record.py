"""XTEST's requests as the X server receives them (the RECORD extension), to catch the
keys and clicks XInput2's `sourceid` does not.

XTEST can inject a key "from" a given device (an XI1 device event in its FakeInput
request): the X server then attributes the key to that device — the real keyboard — so
the raw event's source says nothing. RECORD sees every client's FakeInput request
itself, with the server time it arrived: a key or click whose time and keycode match
one of them was injected, whichever device it is attributed to.

`XTestRecorder` keeps a RECORD context on two connections of its own, enabled while a
decision dialog is open (`start`/`stop`); the intercepted requests stream in on one of
them, read on the GUI thread when its socket is readable and at each check (no thread:
a second Python thread waking up would take the GIL from the dialog's first frame).
Only FakeInput requests (and our own marker, a NoOperation request)
are recorded, and they are kept for 10 s (server time) past the newest.
"""

from __future__ import annotations

import logging
import select
import struct
import time as clock
from collections.abc import Callable

from qoder_desktop.ui.x11_input import InputKind, RecentByTime, X11InputUnavailable, connect
from qoder_desktop.ui.xcb import GET_INPUT_FOCUS, NO_OPERATION, Connection, XcbError

log = logging.getLogger(__name__)

MATCH_MS = 3
"""How far apart (ms) a FakeInput request's arrival and its event's time may be."""
SYNC_TIMEOUT_S = 0.5
_FAKE_INPUT = 2  # XTEST's FakeInput minor opcode
_QUERY_VERSION, _CREATE_CONTEXT, _ENABLE_CONTEXT, _DISABLE_CONTEXT = 0, 1, 5, 6
_FROM_CLIENT_TIME, _ALL_CLIENTS = 2, 3  # (RECORD's element header and client spec)
_FROM_CLIENT, _END_OF_DATA = 1, 5
_CORE_KINDS = {2: InputKind.KEY_PRESS, 3: InputKind.KEY_RELEASE,
               4: InputKind.BUTTON_PRESS, 5: InputKind.BUTTON_RELEASE}
_XI1_OFFSETS = {1: InputKind.KEY_PRESS, 2: InputKind.KEY_RELEASE,
                3: InputKind.BUTTON_PRESS, 4: InputKind.BUTTON_RELEASE}
"""XI1 device events (DeviceKeyPress …) by their offset from XInput's first event."""


Fake = tuple[InputKind, int, int]
"""A FakeInput request: the kind of event, the server time it arrived, its detail."""


def parse_elements(elements: bytes, xtest_opcode: int,
                   xi_first_event: int) -> tuple[list[Fake], int]:
    """The FakeInput requests and the number of NoOperation requests in one RECORD
    reply's data (each element: the server time it arrived, 4 bytes, and the request).
    A request with a delay is left out: the server records it again when it runs it."""
    fakes: list[Fake] = []
    no_ops = offset = 0
    while offset + 8 <= len(elements):
        time = int.from_bytes(elements[offset:offset + 4], "little")
        request = elements[offset + 4:]
        length = int.from_bytes(request[2:4], "little") * 4
        if length == 0:  # (a big request: not one recorded here)
            break
        if request[0] == NO_OPERATION:
            no_ops += 1
        elif request[0] == xtest_opcode and request[1] == _FAKE_INPUT and length >= 12:
            event_type, detail = request[4] & 0x7F, request[5]
            kind = _CORE_KINDS.get(event_type)
            if kind is None and xi_first_event:
                kind = _XI1_OFFSETS.get(event_type - xi_first_event)
            if kind is not None and not int.from_bytes(request[8:12], "little"):
                fakes.append((kind, time, detail))
        offset += 4 + length
    return fakes, no_ops


def parse_enable_context_reply(reply: bytes) -> tuple[int, int, bytes]:
    """One reply of RECORD's EnableContext: its category (`_FROM_CLIENT`, `_END_OF_DATA`
    …), the resource id base of the client whose requests it carries, and its data."""
    category, xid_base = struct.unpack_from("=xB10xI", reply)
    return category, xid_base, reply[32:]


def record_range(xtest_opcode: int) -> bytes:
    """RECORD's range of what is recorded: XTEST's FakeInput and core NoOperation
    requests, nothing else."""
    return struct.pack("=BBBB" "BBHH" "BBHH" "BBBBBB" "BB",
                       NO_OPERATION, NO_OPERATION, 0, 0,  # core requests, core replies
                       xtest_opcode, xtest_opcode, _FAKE_INPUT, _FAKE_INPUT,  # ext requests
                       0, 0, 0, 0,  # ext replies
                       0, 0, 0, 0, 0, 0,  # delivered events, device events, errors
                       0, 0)  # client started, client died


def made_by(fakes: list[Fake], kind: InputKind, time: int, detail: int | None) -> bool:
    """Whether one of `fakes` made the event of `kind` at `time` (with `detail`)."""
    return any(fake_kind is kind and abs(fake_time - time) <= MATCH_MS
               and (detail is None or fake_detail == detail)
               for fake_kind, fake_time, fake_detail in fakes)


class XTestRecorder:
    """Records XTEST FakeInput requests from every client while started."""

    def __init__(self, ctl: Connection, data: Connection, record_opcode: int, context: int,
                 xtest_opcode: int, xi_first_event: int) -> None:
        self._ctl = ctl
        """The connection that asks: enables, disables, and sends our markers."""
        self._data = data
        """The connection RECORD streams the intercepted requests on (while enabled)."""
        self._record = record_opcode
        self._context = context
        self._xtest = xtest_opcode
        self._xi_first_event = xi_first_event
        self._sequence: int | None = None
        """The EnableContext request whose replies stream in (None: not enabled)."""
        self._fakes: RecentByTime[Fake] = RecentByTime()
        """Kept by time, not count: no flood of requests pushes out the one looked for."""
        self._markers_sent = 0
        self._markers_seen = 0
        self._marker_base = ctl.setup.resource_id_base

    @classmethod
    def open(cls, display: str | None = None) -> XTestRecorder:
        """Two connections and a RECORD context for XTEST's FakeInput requests (not yet
        enabled); `X11InputUnavailable` (`missing`) when the server has no RECORD."""
        opened: list[Connection] = []
        try:
            ctl = connect(display)
            opened.append(ctl)
            found = {n: ctl.query_extension(n) for n in (b"RECORD", b"XTEST", b"XInputExtension")}
            if not found[b"RECORD"].present or not found[b"XTEST"].present:
                raise X11InputUnavailable("the X server has no RECORD extension",
                                          missing=True)
            record, xtest = found[b"RECORD"].major_opcode, found[b"XTEST"].major_opcode
            ctl.call(record, _QUERY_VERSION, struct.pack("=HH", 1, 13))
            context = ctl.generate_id()
            ctl.check(ctl.send(record, _CREATE_CONTEXT, struct.pack(
                "=IB3xIII", context, _FROM_CLIENT_TIME, 1, 1, _ALL_CLIENTS)
                + record_range(xtest), checked=True))
            data = connect(display)
            opened.append(data)
        except Exception as exc:
            for conn in opened:
                conn.disconnect()
            if isinstance(exc, X11InputUnavailable):
                raise
            raise X11InputUnavailable(f"could not set up recording XTEST ({exc})") from exc
        xinput = found[b"XInputExtension"]
        return cls(ctl, data, record, context, xtest,
                   xinput.first_event if xinput.present else 0)

    def fileno(self) -> int:
        """The socket the intercepted requests arrive on (call `read` when readable)."""
        return self._data.fileno()

    def start(self) -> None:
        """Record FakeInput requests from now on (the context enabled)."""
        if self._sequence is not None:
            return
        try:
            sequence = self._data.send(self._record, _ENABLE_CONTEXT,
                                       struct.pack("=I", self._context), reply=True)
            self._data.flush()
        except XcbError as exc:
            raise X11InputUnavailable(f"could not start recording XTEST ({exc})") from exc
        self._sequence = sequence

    def stop(self) -> None:
        """Stop recording and forget what was recorded."""
        if self._sequence is not None:
            try:
                self._ctl.check(self._ctl.send(self._record, _DISABLE_CONTEXT,
                                               struct.pack("=I", self._context),
                                               checked=True))
                self._wait(lambda: self._sequence is None)  # (until its end of data)
            except Exception:
                log.debug("stopping the XTEST recording failed", exc_info=True)
            self._sequence = None
        self._fakes.clear()
        self._markers_sent = self._markers_seen = 0

    def close(self) -> None:
        """Stop, and close both connections."""
        self.stop()
        for conn in (self._ctl, self._data):
            conn.disconnect()

    def read(self) -> None:
        """Take the intercepted requests that arrived (never blocks)."""
        while self._sequence is not None:
            try:
                reply = self._data.poll_reply(self._sequence)
            except XcbError as exc:
                raise X11InputUnavailable("the X server stopped recording XTEST") from exc
            if reply is None:
                if self._data.has_error():
                    raise X11InputUnavailable("the XTEST recording's connection was lost")
                return
            category, xid_base, data = parse_enable_context_reply(reply)
            if category == _END_OF_DATA:
                self._sequence = None
            elif category == _FROM_CLIENT:
                self._take(data, xid_base == self._marker_base)

    def injected(self, kind: InputKind, time: int, detail: int | None) -> bool:
        """Whether an XTEST request made the event of `kind` at `time` (keys: `detail`
        is the keycode). Waits until the server has passed on every request so far.

        Raises:
            X11InputUnavailable: not recording, or the server did not answer in time.
        """
        if self._sequence is None:
            raise X11InputUnavailable("XTEST is not being recorded")
        self._markers_sent += 1
        wanted = self._markers_sent
        try:  # (the round trip after it makes the server flush what RECORD holds)
            self._ctl.send(NO_OPERATION)
            self._ctl.call(GET_INPUT_FOCUS)
        except XcbError as exc:
            raise X11InputUnavailable(f"the X connection was lost ({exc})") from exc
        self._wait(lambda: self._markers_seen >= wanted)
        return made_by(self._fakes.near(time, MATCH_MS), kind, time, detail)

    def _wait(self, done: Callable[[], bool]) -> None:
        """Read until `done()`, waiting on the socket; `X11InputUnavailable` after
        `SYNC_TIMEOUT_S`."""
        deadline = clock.monotonic() + SYNC_TIMEOUT_S
        self.read()
        while not done():
            left = deadline - clock.monotonic()
            if left <= 0:
                raise X11InputUnavailable("the X server did not pass on the XTEST "
                                          "requests in time")
            select.select([self.fileno()], [], [], left)
            self.read()

    def _take(self, elements: bytes, ours: bool) -> None:
        fakes, no_ops = parse_elements(elements, self._xtest, self._xi_first_event)
        for fake in fakes:
            self._fakes.add(fake[1], fake)
        if ours:
            self._markers_seen += no_ops
