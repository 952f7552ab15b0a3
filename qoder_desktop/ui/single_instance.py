"""One running app per user and data folder: a second launch hands its work over.

A second `qoder-desktop --prompt …` connects to the running instance's `QLocalServer`,
sends one JSON line (the session to start, or just "show the window") and exits. The
check runs before the first paint, so on Unix it uses a plain Unix socket (the server's
socket file) and QtNetwork loads only with the server, after the first paint.

The server starts after the first paint, so a launch also claims the data folder's
instance lock (`claim_instance`) before it paints, first: a launch that gets it is the
only one on that data and asks nobody; one that finds it held hands over to the running
instance, or waits for a starting one's server (`hand_over_when_ready`) instead of
opening a second app on the same data.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    import socket as stdlib_socket

    from PySide6.QtNetwork import QLocalSocket

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_MS = 2000  # generous: a busy running instance still accepts in time
MAX_MESSAGE_BYTES = 1_000_000
STARTING_WAIT_S = 20.0
"""How long a launch waits for an instance that holds the lock to start its server."""
LOCK_FILE = "instance.lock"


SOCKET_PATH_LIMIT = 100
"""Bytes of a Unix socket path that every system takes (sun_path is 104–108 bytes)."""


def server_name(data_dir: str) -> str:
    """The local socket name for this user and data folder.

    On Unix a full path: in the temporary folder Qt would use, or in /tmp when that path
    would be too long for a socket (a long $TMPDIR made listen() fail, and every launch
    then opened its own window).
    """
    import hashlib  # (a first launch needs it only after its first frame)

    digest = hashlib.sha256(os.path.realpath(data_dir).encode()).hexdigest()[:16]
    name = f"qoder-desktop-{os.getuid() if hasattr(os, 'getuid') else 'user'}-{digest}"
    if os.name != "posix":
        return name
    path = os.path.join(tempfile.gettempdir(), name)
    return path if len(os.fsencode(path)) <= SOCKET_PATH_LIMIT else os.path.join("/tmp", name)


def _socket_path(name: str) -> str:
    """Where `QLocalServer.listen(name)` puts its socket file on Unix."""
    if os.path.isabs(name):
        return name
    return os.path.join(os.path.normpath(os.environ.get("TMPDIR") or "/tmp"), name)


def _unix_connect(name: str) -> stdlib_socket.socket | None:
    """A connected Unix socket to the server on `name`, or None when nobody answers.

    Without a socket file nobody listens: the `socket` module (its enums cost start-up
    time) loads only when there is one.
    """
    path = _socket_path(name)
    if not os.path.exists(path):
        return None
    import socket as stdlib_socket

    sock = stdlib_socket.socket(stdlib_socket.AF_UNIX, stdlib_socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_MS / 1000)
    try:
        sock.connect(path)
    except OSError:  # no socket file, a stale one (refused), or too slow
        sock.close()
        return None
    return sock


def hand_over(name: str, message: dict[str, Any]) -> bool:
    """Send `message` to a running instance; False when none is running."""
    line = json.dumps(message).encode() + b"\n"
    if os.name == "posix":
        sock = _unix_connect(name)
        if sock is None:
            return False
        with sock, contextlib.suppress(OSError):
            sock.sendall(line)
        return True
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    socket.write(line)
    socket.waitForBytesWritten(CONNECT_TIMEOUT_MS)
    socket.disconnectFromServer()
    return True


class InstanceLock:
    """The data folder's instance lock, held for the life of the process.

    An advisory `flock` on ``instance.lock`` in the data folder: the system drops it when
    the process ends, crashed or not, so a lock is never stale.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @property
    def excludes_others(self) -> bool:
        """True for a real lock: no other launch on this data folder holds it meanwhile
        (False where advisory locks do not exist, and once released)."""
        return self._handle is not None

    def release(self) -> None:
        """Give the lock up (the process ending does the same)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def claim_instance(data_dir: Path) -> InstanceLock | None:
    """The instance lock of `data_dir`, or None while another launch holds it.

    Where advisory locks do not exist (not Unix) every launch gets one: the socket
    check is then the only guard, as before.
    """
    try:
        import fcntl
    except ImportError:
        return InstanceLock(None)
    # Private like the rest of the data folder; held open until the process ends.
    handle = os.fdopen(os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600), "r+b")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return InstanceLock(handle)


def hand_over_when_ready(name: str, message: dict[str, Any],
                         timeout_s: float = STARTING_WAIT_S) -> bool:
    """Hand `message` over to an instance that is still starting; False after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        if hand_over(name, message):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _answers(name: str) -> bool:
    """True when an instance accepts connections on `name`."""
    if os.name == "posix":
        sock = _unix_connect(name)
        if sock is not None:
            sock.close()
        return sock is not None
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(name)
    connected = socket.waitForConnected(CONNECT_TIMEOUT_MS)
    socket.abort()
    return connected


class InstanceServer(QObject):
    """Listens for hand-overs from later launches.

    Signals:
        message_received(dict): one JSON object sent by a later launch.
    """

    message_received = Signal(dict)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        from PySide6.QtNetwork import QLocalServer

        super().__init__(parent)
        self._server = QLocalServer(self)
        self._buffers: dict[QLocalSocket, bytearray] = {}
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        # Asked first: with socket options Qt's listen() replaces a live instance's
        # socket file (a launch whose hand-over was too slow would make itself the one).
        if _answers(name):
            log.warning("another instance holds %s; this one takes no hand-overs", name)
            return
        if not self._server.listen(name):
            # A stale socket file from a crashed instance: nobody answers on it.
            QLocalServer.removeServer(name)
            if not self._server.listen(name):
                log.warning("single-instance server could not listen: %s",
                            self._server.errorString())

    @property
    def listening(self) -> bool:
        """True when this instance owns the name; False means another one may run."""
        return self._server.isListening()

    def close(self) -> None:
        """Stop listening."""
        self._server.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = bytearray()
            socket.readyRead.connect(self._read_ready)
            socket.disconnected.connect(self._dropped)

    def _read_ready(self) -> None:
        from PySide6.QtNetwork import QLocalSocket

        socket = self.sender()
        if not isinstance(socket, QLocalSocket) or socket not in self._buffers:
            return
        buffer = self._buffers[socket]
        buffer.extend(bytes(socket.readAll().data()))
        if len(buffer) > MAX_MESSAGE_BYTES:
            self._buffers.pop(socket, None)
            socket.abort()
        elif b"\n" in buffer:
            line = bytes(buffer).split(b"\n", 1)[0]
            self._buffers.pop(socket, None)
            self._deliver(line)

    def _dropped(self) -> None:
        from PySide6.QtNetwork import QLocalSocket

        socket = self.sender()
        if isinstance(socket, QLocalSocket):
            self._buffers.pop(socket, None)
            socket.deleteLater()

    def _deliver(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            log.warning("ignored a malformed hand-over message")
            return
        if isinstance(message, dict):
            self.message_received.emit(message)
