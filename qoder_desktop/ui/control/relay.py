"""Answers from worker threads carried to the GUI thread, for controllers that ask the
store off the loop (the history's reader)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QObject, Signal


class Relay(QObject):
    """Carries a worker thread's answer to the GUI thread (connected queued: an answer
    always comes in a later loop turn, even one ready before its callback was added)."""

    arrived = Signal(object, object)


def deliver(relay: Relay, future: Future[Any], handler: Callable[[Any], None]) -> None:
    """Call `handler(result_or_exception)` on the GUI thread once `future` is done."""
    def done(fut: Future[Any]) -> None:
        try:
            value: Any = fut.result()
        except BaseException as exc:
            value = exc
        # RuntimeError: the window (and its model) closed meanwhile; nobody waits.
        with contextlib.suppress(RuntimeError):
            relay.arrived.emit(handler, value)

    future.add_done_callback(done)
