"""A same-user process that abuses the terminal hook socket (run as a child process).

It raises its own descriptor limit to the hard limit, so it can hold more connections
than the app under test may. Commands arrive one per line on stdin; each answer is one
JSON line on stdout:

- ``idle N``: open N connections (in order) that send nothing; ``{"connected": k}``.
- ``status``: which of the idle connections the app closed: ``{"closed": [indices]}``.
- ``bad N``: N connections, one after another, that each send a line of garbage and
  close; ``{"sent": k}`` (those that connected).
- ``junk N SIZE``: N connections that each send a valid hello and then up to SIZE bytes
  that are not a proof (no newline), as far as the app takes them; ``{"closed": k}`` once
  each was closed by the app or took all SIZE bytes (``{"swallowed": m}`` of them).
- ``storm``: from now on, connect again and again (in a thread), holding the newest
  connections, for at most `DEADLINE` seconds; ``{"storming": true}`` after the first.
- ``calm``: stop the storm; ``{"connected": k}`` (how many connects it made).
- ``quit``.

Everything is bounded: connects and sends give up after `DEADLINE` seconds.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import select
import socket
import sys
import threading
import time

DEADLINE = 30.0


def _raise_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _connect(path: str, until: float) -> socket.socket | None:
    """A connected socket, retrying while the app's backlog is full."""
    while time.monotonic() < until:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(path)
            return sock
        except (BlockingIOError, InterruptedError):
            sock.close()
            time.sleep(0.005)
        except OSError:
            sock.close()
            return None
    return None


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _hello() -> bytes:
    return json.dumps({"hello": "qoder-desktop-hook", "version": 2,
                       "nonce": os.urandom(16).hex()}).encode() + b"\n"


def _junk(path: str, count: int, size: int) -> dict[str, int]:
    until = time.monotonic() + DEADLINE
    pending: dict[socket.socket, int] = {}
    for _ in range(count):
        sock = _connect(path, until)
        if sock is None:
            continue
        sock.setblocking(True)
        sock.settimeout(DEADLINE)
        sock.sendall(_hello())
        sock.recv(4096)  # the challenge
        sock.setblocking(False)
        pending[sock] = size
    closed = swallowed = 0
    chunk = b"a" * 65536
    while pending and time.monotonic() < until:
        _, writable, _ = select.select([], list(pending), [], 1.0)
        for sock in writable:
            try:
                sent = sock.send(chunk[:pending[sock]])
            except BlockingIOError:
                continue
            except OSError:
                closed += 1
                del pending[sock]
                sock.close()
                continue
            pending[sock] -= sent
            if pending[sock] == 0:
                swallowed += 1
                del pending[sock]
    return {"closed": closed, "swallowed": swallowed, "pending": len(pending)}


class Storm:
    """Connections opened as fast as the app takes them (idle, the newest held)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.connected = 0
        self.started = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        held: list[socket.socket] = []
        until = time.monotonic() + DEADLINE
        while not self._stop.is_set() and time.monotonic() < until:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(self.path)
            except (BlockingIOError, InterruptedError):
                sock.close()
                time.sleep(0.001)
                continue
            except OSError:
                sock.close()
                break
            held.append(sock)
            self.connected += 1
            self.started.set()
            if len(held) >= 1000:
                for old in held[:500]:
                    old.close()
                del held[:500]
        self.started.set()
        for sock in held:
            sock.close()

    def calm(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.connected


def main(path: str) -> None:
    """Serve commands until ``quit``."""
    _raise_limit()
    idle: list[socket.socket] = []
    for line in sys.stdin:
        command, *args = line.split()
        if command == "idle":
            until = time.monotonic() + DEADLINE
            for _ in range(int(args[0])):
                sock = _connect(path, until)
                if sock is None:
                    break
                idle.append(sock)
            answer: dict[str, object] = {"connected": len(idle)}
        elif command == "status":
            answer = {"closed": [i for i, sock in enumerate(idle) if _closed_by_peer(sock)]}
        elif command == "bad":
            until = time.monotonic() + DEADLINE
            sent = 0
            for _ in range(int(args[0])):
                sock = _connect(path, until)
                if sock is None:
                    break
                sent += 1
                try:
                    sock.send(b"not a hello\n")
                except OSError as exc:
                    if exc.errno not in (errno.EPIPE, errno.ECONNRESET):
                        raise
                sock.close()
            answer = {"sent": sent}
        elif command == "storm":
            storm = Storm(path)
            storm.started.wait(DEADLINE)
            answer = {"storming": storm.connected > 0}
        elif command == "calm":
            answer = {"connected": storm.calm()}
        elif command == "junk":
            answer = dict(_junk(path, int(args[0]), int(args[1])))
        else:
            break
        print(json.dumps(answer), flush=True)
    for sock in idle:
        sock.close()


if __name__ == "__main__":
    main(sys.argv[1])
