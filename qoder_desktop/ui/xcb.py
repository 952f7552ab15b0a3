"""A small X11 client over the system's libxcb, through `ctypes` (no Qt, no cffi).

The input-origin check (`ui/x11_input.py`, `ui/x11_record.py`) needs a connection of
its own and a dozen requests, replies and events. libxcb does the connection's work
(authentication, sequence numbers, reading replies and events); the requests are packed
and their answers decoded with `struct` by the callers, as the X protocol lays them out.
libxcb is already loaded by Qt's xcb platform, so this adds one small module, where a
full binding (xcffib: cffi, pycparser and its generated protocol modules) held ~5.5 MB
of the live app.

Requests are sent without libxcb's extension table: an extension request carries its
major opcode (from `query_extension`) and its minor opcode as the first two bytes, as
on the wire. Loading the library raises `OSError` when libxcb is missing.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

LIBRARY = "libxcb.so.1"
"""The shared library loaded (the soname Debian's libxcb1 installs)."""

GENERIC_EVENT = 35
"""The response type of XGE events (XInput2's among them), which may be longer than 32
bytes; libxcb puts the 4-byte full sequence number at byte 32, before the rest."""
QUERY_EXTENSION, INTERN_ATOM, GET_INPUT_FOCUS, NO_OPERATION = 98, 16, 43, 127
_REQUEST_CHECKED = 1


class XcbError(Exception):
    """A request failed (the X server's error code, or 0 when the connection is gone)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class _IoVec(ctypes.Structure):
    _fields_ = (("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t))


class _ProtocolRequest(ctypes.Structure):
    _fields_ = (("count", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("opcode", ctypes.c_uint8), ("isvoid", ctypes.c_uint8))


class _VoidCookie(ctypes.Structure):
    _fields_ = (("sequence", ctypes.c_uint),)


_loaded: tuple[ctypes.CDLL, ctypes.CDLL] | None = None


def _libraries() -> tuple[ctypes.CDLL, ctypes.CDLL]:
    """libxcb with the signatures used here, and the C library (for `free`)."""
    global _loaded
    if _loaded is None:
        xcb, libc = ctypes.CDLL(LIBRARY), ctypes.CDLL(None)
        ptr, conn, uint = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint
        signatures = {
            "xcb_connect": ([ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)], conn),
            "xcb_connection_has_error": ([conn], ctypes.c_int),
            "xcb_disconnect": ([conn], None),
            "xcb_get_setup": ([conn], ptr),
            "xcb_get_file_descriptor": ([conn], ctypes.c_int),
            "xcb_flush": ([conn], ctypes.c_int),
            "xcb_generate_id": ([conn], ctypes.c_uint32),
            "xcb_send_request": ([conn, ctypes.c_int, ctypes.POINTER(_IoVec),
                                  ctypes.POINTER(_ProtocolRequest)], uint),
            "xcb_wait_for_reply": ([conn, uint, ctypes.POINTER(ptr)], ptr),
            "xcb_poll_for_reply": ([conn, uint, ctypes.POINTER(ptr), ctypes.POINTER(ptr)],
                                   ctypes.c_int),
            "xcb_request_check": ([conn, _VoidCookie], ptr),
            "xcb_poll_for_event": ([conn], ptr),
        }
        try:
            for name, (args, result) in signatures.items():
                function = getattr(xcb, name)
                function.argtypes, function.restype = args, result
            libc.free.argtypes, libc.free.restype = [ptr], None
        except AttributeError as exc:  # (a libxcb without a function used here)
            raise OSError(str(exc)) from exc
        _loaded = xcb, libc
    return _loaded


@dataclass(frozen=True)
class Setup:
    """What the connection set-up says that the check uses."""

    resource_id_base: int
    min_keycode: int
    max_keycode: int
    roots: tuple[int, ...]
    """Each screen's root window."""


def parse_setup(data: bytes) -> Setup:
    """The set-up block the X server sent at connection (as libxcb keeps it)."""
    (resource_id_base, vendor_len, roots_len, formats_len, min_keycode,
     max_keycode) = struct.unpack_from("=12xI8xH2xBB4xBB", data)
    offset = 40 + (vendor_len + 3) // 4 * 4 + 8 * formats_len
    roots = []
    for _ in range(roots_len):
        roots.append(struct.unpack_from("=I", data, offset)[0])
        depths = data[offset + 39]
        offset += 40
        for _ in range(depths):
            visuals = struct.unpack_from("=H", data, offset + 2)[0]
            offset += 8 + 24 * visuals
    return Setup(resource_id_base, min_keycode, max_keycode, tuple(roots))


@dataclass(frozen=True)
class Extension:
    """An extension as QueryExtension reports it."""

    present: bool
    major_opcode: int
    first_event: int


class Connection:
    """One connection to an X display (`connect`); requests as bytes (`send`), answers
    as bytes (`reply`, `check`, `poll_reply`), events as bytes (`poll_event`)."""

    def __init__(self, pointer: int, screen: int) -> None:
        self._xcb, self._libc = _libraries()
        self._pointer: int | None = pointer
        self.screen = screen
        """The display's preferred screen (`$DISPLAY`'s ".N")."""
        self.setup = parse_setup(self._setup_bytes())

    @classmethod
    def connect(cls, display: str | None = None) -> Connection:
        """Connect to `display` (default: $DISPLAY).

        Raises:
            OSError: libxcb could not be loaded.
            XcbError: the connection failed.
        """
        xcb, _ = _libraries()
        screen = ctypes.c_int(0)
        pointer = xcb.xcb_connect(display.encode() if display else None, ctypes.byref(screen))
        error = xcb.xcb_connection_has_error(pointer)
        if error:
            xcb.xcb_disconnect(pointer)
            raise XcbError(f"could not connect to the X display (libxcb error {error})")
        return cls(pointer, screen.value)

    @property
    def root(self) -> int:
        """The preferred screen's root window."""
        return self.setup.roots[self.screen]

    def fileno(self) -> int:
        """The connection's socket."""
        return int(self._xcb.xcb_get_file_descriptor(self._pointer))

    def has_error(self) -> bool:
        """Whether the connection is broken (closed, or a protocol error)."""
        return bool(self._pointer is None or self._xcb.xcb_connection_has_error(self._pointer))

    def flush(self) -> None:
        """Write what is buffered."""
        if self._pointer is None or self._xcb.xcb_flush(self._pointer) <= 0:
            raise XcbError("the X connection was lost")

    def generate_id(self) -> int:
        """A new resource id of this connection."""
        return int(self._xcb.xcb_generate_id(self._live()))

    def send(self, opcode: int, byte1: int = 0, body: bytes = b"", *, reply: bool = False,
             checked: bool = False) -> int:
        """Send the request `opcode` (an extension's major opcode: then `byte1` is its
        minor opcode; for a core request a field of its own) with `body`, the bytes after
        its 4-byte header; its sequence number. A request with a `reply` reports its
        error with the reply; a void one that is `checked`, to `check`."""
        data = bytes((opcode, byte1, 0, 0)) + body
        buffer = ctypes.create_string_buffer(data + bytes(-len(data) % 4))
        vector = (_IoVec * 3)()  # (libxcb may use the two entries before the request's)
        vector[2].iov_base = ctypes.cast(buffer, ctypes.c_void_p).value
        vector[2].iov_len = len(buffer) - 1  # (create_string_buffer adds a NUL)
        request = _ProtocolRequest(1, None, opcode, 0 if reply else 1)
        flags = _REQUEST_CHECKED if reply or checked else 0
        sequence = self._xcb.xcb_send_request(self._live(), flags, ctypes.pointer(vector[2]),
                                              ctypes.byref(request))
        if not sequence:
            raise XcbError("the X connection was lost")
        return int(sequence)

    def reply(self, sequence: int) -> bytes:
        """The reply to request `sequence` (waits for it)."""
        error = ctypes.c_void_p()
        reply = self._xcb.xcb_wait_for_reply(self._live(), sequence, ctypes.byref(error))
        self._raise_error(error.value)
        if not reply:
            raise XcbError("the X connection was lost")
        return self._take(reply)

    def call(self, opcode: int, byte1: int = 0, body: bytes = b"") -> bytes:
        """Send a request with a reply and wait for the reply."""
        return self.reply(self.send(opcode, byte1, body, reply=True))

    def check(self, sequence: int) -> None:
        """Wait until the `checked` void request `sequence` ran (`XcbError` if it failed)."""
        error = self._xcb.xcb_request_check(self._live(), _VoidCookie(sequence))
        self._raise_error(error)
        if self.has_error():
            raise XcbError("the X connection was lost")

    def poll_reply(self, sequence: int) -> bytes | None:
        """A reply to `sequence` that has arrived, or None (never blocks); a request may
        have several (RECORD's EnableContext)."""
        reply, error = ctypes.c_void_p(), ctypes.c_void_p()
        if not self._xcb.xcb_poll_for_reply(self._live(), sequence, ctypes.byref(reply),
                                            ctypes.byref(error)):
            return None
        self._raise_error(error.value)
        return self._take(reply.value) if reply.value else None

    def poll_event(self) -> bytes | None:
        """The next event (or an error of an unchecked request: its first byte is 0) that
        has arrived, or None (never blocks)."""
        event = self._xcb.xcb_poll_for_event(self._live())
        return self._take(event) if event else None

    def query_extension(self, name: bytes) -> Extension:
        """Whether the server has the extension `name`, and its numbers."""
        body = struct.pack("=H2x", len(name)) + name
        present, major, first_event = struct.unpack_from("=8xBBB", self.call(QUERY_EXTENSION,
                                                                               0, body))
        return Extension(bool(present), major, first_event)

    def intern_atom(self, name: bytes, *, only_if_exists: bool) -> int:
        """The atom named `name` (0 when it does not exist and `only_if_exists`)."""
        body = struct.pack("=H2x", len(name)) + name
        return int(struct.unpack_from("=8xI", self.call(INTERN_ATOM, only_if_exists,
                                                        body))[0])

    def disconnect(self) -> None:
        """Close the connection (once; later calls do nothing)."""
        if self._pointer is not None:
            pointer, self._pointer = self._pointer, None
            self._xcb.xcb_disconnect(pointer)

    # -- internals -------------------------------------------------------------------
    def _live(self) -> int:
        if self._pointer is None:
            raise XcbError("the X connection is closed")
        return self._pointer

    def _setup_bytes(self) -> bytes:
        setup = self._xcb.xcb_get_setup(self._pointer)
        length = struct.unpack("=H", ctypes.string_at(setup + 6, 2))[0]
        return ctypes.string_at(setup, 8 + 4 * length)

    def _take(self, pointer: int) -> bytes:
        """The bytes of a reply or event libxcb allocated, which are then freed."""
        try:
            head = ctypes.string_at(pointer, 32)
            size = 32
            if head[0] == 1:  # a reply: 32 bytes and `length` words
                size += 4 * struct.unpack_from("=I", head, 4)[0]
            elif head[0] & 0x7F == GENERIC_EVENT:
                size += 4 + 4 * struct.unpack_from("=I", head, 4)[0]
            return ctypes.string_at(pointer, size)
        finally:
            self._libc.free(pointer)

    def _raise_error(self, error: int | None) -> None:
        if error:
            code = self._take(error)[1]
            raise XcbError(f"the X server refused a request (error {code})", code)
