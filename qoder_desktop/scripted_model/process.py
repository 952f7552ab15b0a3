"""The demo's scripted model in a process of its own (``qoder-desktop scripted-model``).

A person using a real account never has the scripted model, so ``--demo`` runs it beside
the app, not on a thread inside it: the app's memory and threads are then what a person
with an account has (the model's HTTP server, its event loop and the scenarios are the
child's), and the model's work never competes with the window for the interpreter.

The child prints its loopback base URL as its first line and serves until its standard
input closes, so it ends with the app however the app ends (a crash closes the pipe too).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
from collections.abc import Sequence

START_TIMEOUT_S = 60.0
"""How long the app waits for the child's base URL (it imports its HTTP server first)."""
STOP_TIMEOUT_S = 10.0
"""How long the child gets to end after its input closes before it is killed."""

_HELP = """\
usage: qoder-desktop scripted-model [-h]

Serve the scripted model that `qoder-desktop --demo` runs: a loopback Anthropic Messages
API endpoint on 127.0.0.1 (a free port) that plays the built-in scenarios, so the real
Claude Code CLI runs with no network and no account.

Prints the base URL (http://127.0.0.1:PORT) on its first line, then serves until its
standard input closes (end of file), and exits 0.
"""


def model_command() -> list[str]:
    """The command that starts ``qoder-desktop scripted-model`` with this installation
    (the bundle's own executable when frozen by PyInstaller)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "scripted-model"]
    return [sys.executable, "-m", "qoder_desktop", "scripted-model"]


class ScriptedModelProcess:
    """``qoder-desktop scripted-model`` as a child process: `start` it, read its
    `base_url` (blocking: call it off the loop), `stop` it.

    Args:
        command: the command to run (`model_command()` when not given).
    """

    def __init__(self, command: Sequence[str] | None = None) -> None:
        self._command = list(command) if command is not None else model_command()
        self._process: subprocess.Popen[str] | None = None
        self._base_url: str | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id (None before `start`)."""
        return None if self._process is None else self._process.pid

    def start(self) -> None:
        """Start the child (returns at once; `base_url` waits for it to listen)."""
        if self._process is not None:
            raise RuntimeError("the scripted model process is already started")
        self._process = subprocess.Popen(self._command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True)

    def base_url(self, timeout: float = START_TIMEOUT_S) -> str:
        """The child's loopback base URL, once it listens (blocks; at most `timeout` s).

        Raises:
            RuntimeError: it was not started, it exited, or it did not say its URL in time.
        """
        if self._base_url is not None:
            return self._base_url
        process = self._process
        if process is None or process.stdout is None:
            raise RuntimeError("the scripted model process is not started")
        line = _read_line(process, timeout).strip()
        if not line.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"the demo's scripted model did not start (it said {line!r}, "
                               f"exit status {process.poll()})")
        self._base_url = line
        return line

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Close the child's input (it stops serving and exits); kill it if it lingers."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    """The first line of the child's output, or "" when none came within `timeout`."""
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return ""
    return process.stdout.readline()


def serve_main(argv: Sequence[str]) -> int:
    """``qoder-desktop scripted-model``: print the base URL, serve until stdin closes."""
    if list(argv) in (["-h"], ["--help"]):
        sys.stdout.write(_HELP)
        return 0
    parser = argparse.ArgumentParser(prog="qoder-desktop scripted-model", add_help=False)
    try:
        parser.parse_args(list(argv))
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    from qoder_desktop.scripted_model.server import ThreadedScriptedModel

    model = ThreadedScriptedModel()
    model.start()
    try:
        print(model.base_url, flush=True)
        sys.stdin.read()  # until the app closes the pipe (or ends)
    finally:
        model.stop()
    return 0
