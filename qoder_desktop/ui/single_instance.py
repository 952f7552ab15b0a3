"""One running app per user and data folder: a second launch hands its work over.

A second `qoder-desktop --prompt …` connects to the running instance's local server,
sends one JSON line (the session to start, or just "show the window") and exits. On Unix
both ends are plain Unix sockets (the server's socket file, its connections watched by
`QSocketNotifier`s), so QtNetwork — ~3 MB of libraries and bindings a running app would
hold for this alone — is never loaded; elsewhere the server is a `QLocalServer`.

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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSocketNotifier, Signal

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
    """The socket file of `name` on Unix (where `QLocalServer.listen(name)` put it)."""
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
        super().__init__(parent)
        self._listener: _UnixListener | _QtListener | None = None
        # Asked first: listening replaces the socket file, so a launch whose hand-over
        # was too slow would otherwise make itself the one and leave the first deaf.
        if _answers(name):
            log.warning("another instance holds %s; this one takes no hand-overs", name)
            return
        listener_type = _UnixListener if os.name == "posix" else _QtListener
        self._listener = listener_type(name, self._deliver, self)
        if not self._listener.listening:
            log.warning("single-instance server could not listen: %s", self._listener.error)

    @property
    def listening(self) -> bool:
        """True when this instance owns the name; False means another one may run."""
        return self._listener is not None and self._listener.listening

    def close(self) -> None:
        """Stop listening."""
        if self._listener is not None:
            self._listener.close()

    def _deliver(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            log.warning("ignored a malformed hand-over message")
            return
        if isinstance(message, dict):
            self.message_received.emit(message)


class _LineReader:
    """Collects one connection's bytes up to the first newline (at most MAX_MESSAGE_BYTES)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.overflowed = False

    def feed(self, data: bytes) -> bytes | None:
        """Add `data`; returns the first line once it is complete, else None."""
        self._buffer.extend(data)
        if len(self._buffer) > MAX_MESSAGE_BYTES:
            self.overflowed = True
        elif b"\n" in self._buffer:
            return bytes(self._buffer).split(b"\n", 1)[0]
        return None


class _UnixListener(QObject):
    """The server on Unix: a listening Unix socket, each connection read when Qt's event
    loop sees it readable (`QSocketNotifier`), one line per connection.

    The socket file is made private as `QLocalServer`'s UserAccessOption made it: bound
    in a fresh private folder beside it, set to user-only, then renamed into place
    (which also replaces a crashed instance's stale file).
    """

    def __init__(self, name: str, deliver: Callable[[bytes], None], parent: QObject) -> None:
        super().__init__(parent)
        self._deliver = deliver
        self._path = _socket_path(name)
        self._connections: dict[int, tuple[stdlib_socket.socket, QSocketNotifier,
                                           _LineReader]] = {}
        self.error = ""
        self._server: stdlib_socket.socket | None = None
        self._file_id: tuple[int, int] | None = None
        try:
            self._server = self._listen()
        except OSError as exc:
            self.error = str(exc)
            return
        self._accepting = QSocketNotifier(self._server.fileno(),
                                          QSocketNotifier.Type.Read, self)
        self._accepting.activated.connect(lambda *_: self._accept())

    @property
    def listening(self) -> bool:
        """True while the socket listens."""
        return self._server is not None

    def _listen(self) -> stdlib_socket.socket:
        folder = tempfile.mkdtemp(prefix=".qoder-desktop-", dir=os.path.dirname(self._path))
        private_path = os.path.join(folder, "s")
        import socket as stdlib_socket  # (the module's name is for annotations only)

        server = stdlib_socket.socket(stdlib_socket.AF_UNIX, stdlib_socket.SOCK_STREAM)
        try:
            server.bind(private_path)
            os.chmod(private_path, 0o700)
            server.listen(16)
            os.rename(private_path, self._path)
        except OSError:
            server.close()
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(private_path)
            os.rmdir(folder)
        server.setblocking(False)
        status = os.stat(self._path)
        self._file_id = (status.st_dev, status.st_ino)
        return server

    def close(self) -> None:
        """Stop listening, drop open connections and remove the socket file (if still ours)."""
        for fd in list(self._connections):
            self._drop(fd)
        if self._server is None:
            return
        self._accepting.setEnabled(False)
        self._server.close()
        self._server = None
        with contextlib.suppress(OSError):
            status = os.stat(self._path)
            if (status.st_dev, status.st_ino) == self._file_id:
                os.unlink(self._path)

    def _accept(self) -> None:
        while self._server is not None:
            try:
                connection, _ = self._server.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("single-instance server could not accept: %s", exc)
                return
            connection.setblocking(False)
            notifier = QSocketNotifier(connection.fileno(), QSocketNotifier.Type.Read, self)
            fd = connection.fileno()
            self._connections[fd] = (connection, notifier, _LineReader())
            notifier.activated.connect(lambda *_, fd=fd: self._read(fd))

    def _read(self, fd: int) -> None:
        entry = self._connections.get(fd)
        if entry is None:
            return
        connection, _, reader = entry
        try:
            data = connection.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        line = reader.feed(data) if data else None
        if not data or line is not None or reader.overflowed:
            self._drop(fd)
        if line is not None:
            self._deliver(line)

    def _drop(self, fd: int) -> None:
        connection, notifier, _ = self._connections.pop(fd)
        notifier.setEnabled(False)
        notifier.deleteLater()
        connection.close()


class _QtListener(QObject):
    """The server where Unix sockets are not the local transport: a `QLocalServer`."""

    def __init__(self, name: str, deliver: Callable[[bytes], None], parent: QObject) -> None:
        from PySide6.QtNetwork import QLocalServer

        super().__init__(parent)
        self._deliver = deliver
        self._server = QLocalServer(self)
        self._readers: dict[QLocalSocket, _LineReader] = {}
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        if not self._server.listen(name):
            # A stale name left by a crashed instance: nobody answers on it.
            QLocalServer.removeServer(name)
            self._server.listen(name)

    @property
    def listening(self) -> bool:
        """True while the server listens."""
        return self._server.isListening()

    @property
    def error(self) -> str:
        """Why listening failed."""
        return self._server.errorString()

    def close(self) -> None:
        """Stop listening."""
        self._server.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._readers[socket] = _LineReader()
            socket.readyRead.connect(lambda socket=socket: self._read(socket))
            socket.disconnected.connect(lambda socket=socket: self._dropped(socket))

    def _read(self, socket: QLocalSocket) -> None:
        reader = self._readers.get(socket)
        if reader is None:
            return
        line = reader.feed(bytes(socket.readAll().data()))
        if line is not None or reader.overflowed:
            self._readers.pop(socket, None)
            socket.abort()
        if line is not None:
            self._deliver(line)

    def _dropped(self, socket: QLocalSocket) -> None:
        self._readers.pop(socket, None)
        socket.deleteLater()
