"""The app's event loop: qasync's `QEventLoop` that accepts every delay asyncio accepts.

qasync arms one Qt timer per `call_later`/`call_at` with ``int(delay * 1000)``
milliseconds. Qt timers take a signed 32-bit interval, so an infinite delay raises
``OverflowError`` (``int(inf)``) and anything over ``2**31 - 1`` ms (about 24.8 days)
raises ``OverflowError`` in PySide6. Libraries on our loop ask for such delays as a
matter of course: anyio's ``sleep_forever()`` is ``sleep(math.inf)`` (the ``mcp``
SDK's session manager waits in it for every gateway session), and far deadlines come
from cancel scopes, keep-alives and retry timers. Plain asyncio accepts them all.

`AppEventLoop` gives those delays asyncio's meaning:

- ``+inf`` (and NaN, which is no moment in time) is *never*: no Qt timer is armed, the
  returned handle can still be cancelled, nothing ever runs it. A NaN is logged, since
  it is a bug in the caller; running it at once instead would turn a
  ``while True: await sleep(nan)`` into a busy loop.
- A finite delay longer than the longest Qt timer is kept exactly: a relay timer fires
  after the longest interval and re-arms for what is left, until the deadline is
  reached. (Clamping alone would fire early; "never" would drop a real deadline.)
- Everything else (including zero and negative delays) goes to qasync unchanged.

It also does what asyncio's own ``run_forever`` does and qasync (0.28, on Unix) does
not: it installs the loop's async-generator hooks while it runs. Without them an async
generator that is dropped before its end (an ``async for`` left with ``break``; httpx,
anyio and both SDKs are full of them) is finalized by the garbage collector, outside
the loop, wherever collection happens to run: its ``finally`` cannot await, errors
surface in unrelated code, and `shutdown_asyncgens` has nothing to close.

Qt runs the loop's callbacks (one Qt timer each) whenever it processes events, also
while asyncio does not count the loop as running: in the last pass qasync's
``run_until_complete`` makes after the loop stopped, and wherever Qt events are
processed between runs (pytest-qt does after each test phase). A task stepped there
(a server's sleep timer come due) failed with "no running event loop". `AppEventLoop`
marks itself as the running loop for such a callback.

Closing it deletes its Qt helper objects (the timer object, the signaller behind
``call_soon_threadsafe``) right away, in the loop's thread. qasync leaves them to the
garbage collector, which may run in any thread: a closed loop collected in a worker
thread deleted Qt objects there and crashed the process (seen in the test suite, where
a loop is made and closed per test).

A worker thread that finishes after the loop closed (a keyring call, an import on a
thread) hands its result back through ``call_soon_threadsafe``: on qasync's closed loop
that emitted a signal of a deleted object and crashed the process (seen under
pytest-xdist). `AppEventLoop` refuses it, as asyncio's own loops do ("Event loop is
closed"), and a lock keeps the emission and the deletion apart.

A cancelled callback gives up its Qt timer at once. qasync keeps a cancelled callback,
and its Qt timer, until the timer fires: every ``wait_for``/``timeout`` that finished
early left its timer armed for the rest of its delay (a terminal request's 180 s wait,
per request), a growing pile of dead timers for a busy day. Asyncio's own loops drop a
cancelled timer too.

Work handed to a thread (``asyncio.to_thread``, ``run_in_executor(None, ...)``) runs on
a standard `concurrent.futures.ThreadPoolExecutor`, which starts a thread only when no
idle one is free, up to `WORKER_THREADS`. qasync's own default executor starts ten
`QThread`s at its first job and keeps them all: each with its stack and, once it
allocates, a malloc arena of its own (~1–2 MB of RSS in the app, measured with a live
session), for jobs that come one at a time.

Every place that creates the app's loop (``run_gui``, the benchmarks, the tests) uses
this class, so what the tests exercise is the loop the app runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import logging
import math
import sys
import threading
from collections.abc import Callable
from typing import Any

import qasync
import shiboken6
from PySide6.QtCore import QTimerEvent

log = logging.getLogger(__name__)

MAX_TIMER_MS = 2**31 - 1
"""The longest interval a Qt timer takes (a signed 32-bit count of milliseconds)."""
MAX_TIMER_SECONDS = MAX_TIMER_MS / 1000
"""`MAX_TIMER_MS` in seconds (about 24.8 days)."""
WORKER_THREADS = 8
"""The most threads the loop's default executor runs at once (started as work needs
them: the app's jobs mostly come one at a time, so one or two exist)."""


class _TimerHandle(asyncio.Handle):
    """A callback waiting for its Qt timer; cancelling it disarms the timer at once."""

    __slots__ = ("disarm",)

    def __init__(self, callback: Callable[..., object], args: tuple[Any, ...],
                 loop: asyncio.AbstractEventLoop, context: contextvars.Context | None = None,
                 ) -> None:
        super().__init__(callback, args, loop, context=context)
        self.disarm: Callable[[], None] | None = None

    def cancel(self) -> None:
        """Cancel the callback and give up its Qt timer."""
        disarm, self.disarm = self.disarm, None
        super().cancel()
        if disarm is not None:
            disarm()


class _LoopTimer(qasync._SimpleTimer):  # type: ignore[misc,name-defined]
    """qasync's callback timer, running each callback with its loop as the running one
    and killing a cancelled callback's Qt timer at once."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._loop = loop
        self._thread = threading.get_ident()

    @property
    def _callbacks(self) -> dict[int, asyncio.Handle]:
        return self._SimpleTimer__callbacks  # type: ignore[no-any-return]

    def add_callback(self, handle: asyncio.Handle, delay: float = 0) -> asyncio.Handle:
        """Arm a Qt timer for `handle` (as qasync does); a cancel kills it."""
        timer_id = self.startTimer(int(max(0, delay) * 1000))
        self._callbacks[timer_id] = handle
        if isinstance(handle, _TimerHandle) and delay > 0:
            handle.disarm = functools.partial(self._disarm, timer_id)
        return handle

    def _disarm(self, timer_id: int) -> None:
        """Forget a cancelled callback and kill its Qt timer (in the loop's thread only:
        elsewhere, or once the loop is closed, the timer fires and finds it cancelled)."""
        if threading.get_ident() != self._thread or not shiboken6.isValid(self):
            return
        if self._callbacks.pop(timer_id, None) is not None:
            self.killTimer(timer_id)

    def armed(self) -> int:
        """Callbacks waiting for their Qt timer."""
        return len(self._callbacks)

    def timerEvent(self, event: QTimerEvent) -> None:
        """Run the due callback; outside a run, with this loop marked as running."""
        due = self._callbacks.get(event.timerId())
        if due is None:  # disarmed already (qasync would fail on the unknown id)
            self.killTimer(event.timerId())
            return
        if isinstance(due, _TimerHandle):
            due.disarm = None  # running now: qasync forgets it when it returns
        if asyncio.events._get_running_loop() is not None:
            super().timerEvent(event)
            return
        asyncio.events._set_running_loop(self._loop)
        try:
            super().timerEvent(event)
        finally:
            asyncio.events._set_running_loop(None)


class AppEventLoop(qasync.QEventLoop):  # type: ignore[misc,valid-type]
    """qasync's loop for Qt and asyncio on one thread, safe for infinite and huge delays.

    Args:
        app: the QApplication (the running instance when None).
        **kwargs: passed to `qasync.QEventLoop`.
    """

    def __init__(self, app: Any = None, **kwargs: Any) -> None:
        self._previous_asyncgen_hooks: Any = None
        self._threadsafe = threading.Lock()  # call_soon_threadsafe against close()
        super().__init__(app, **kwargs)
        self.set_default_executor(concurrent.futures.ThreadPoolExecutor(
            max_workers=WORKER_THREADS, thread_name_prefix="qoder-desktop-worker"))
        plain = self.__dict__["_timer"]  # qasync's, which has no callbacks yet
        self.__dict__["_timer"] = _LoopTimer(self)
        shiboken6.delete(plain)

    def _before_run_forever(self) -> None:
        """Install the loop's async-generator hooks, as `asyncio` loops do while running."""
        super()._before_run_forever()
        self._previous_asyncgen_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(firstiter=self._asyncgen_firstiter_hook,
                               finalizer=self._asyncgen_finalizer_hook)

    def _after_run_forever(self) -> None:
        """Put back the async-generator hooks that were there before the loop ran."""
        try:
            if self._previous_asyncgen_hooks is not None:
                sys.set_asyncgen_hooks(*self._previous_asyncgen_hooks)
                self._previous_asyncgen_hooks = None
        finally:
            super()._after_run_forever()

    def close(self) -> None:
        """Close the loop and delete its Qt helpers now, in this thread (see above)."""
        helpers = [getattr(self, "_timer", None),
                   getattr(self, "_QEventLoop__call_soon_signaller", None)]
        super().close()  # waits for the default executor's threads; not under the lock
        with self._threadsafe:
            for helper in helpers:
                if helper is not None and shiboken6.isValid(helper):
                    shiboken6.delete(helper)

    def call_soon_threadsafe(self, callback: Any, *args: Any, context: Any = None) -> Any:
        """qasync's `call_soon_threadsafe`, refused once the loop is closed (as asyncio's
        loops refuse it) instead of emitting through a deleted Qt object."""
        with self._threadsafe:
            if self.is_closed():
                raise RuntimeError("Event loop is closed")
            return super().call_soon_threadsafe(callback, *args, context=context)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any,
                   context: contextvars.Context | None = None) -> asyncio.Handle:
        """qasync's `call_later` (and so `call_soon` and `call_at`), with a handle whose
        cancel gives up its Qt timer at once (see the module docstring)."""
        if asyncio.iscoroutinefunction(callback):
            raise TypeError("coroutines cannot be used with call_later")
        if not callable(callback):
            raise TypeError(f"callback must be callable: {type(callback).__name__}")
        return self._add_callback(_TimerHandle(callback, args, self, context=context), delay)

    def timers_armed(self) -> int:
        """Callbacks waiting for a Qt timer (cancelled ones give theirs up at once)."""
        timer = self.__dict__.get("_timer")
        return timer.armed() if isinstance(timer, _LoopTimer) else 0

    def _add_callback(self, handle: asyncio.Handle, delay: float = 0) -> asyncio.Handle:
        """Arm a Qt timer for `handle`; see the module docstring for long delays."""
        if delay <= MAX_TIMER_SECONDS:  # the common case, NaN compares False
            return super()._add_callback(handle, delay)  # type: ignore[no-any-return]
        if math.isnan(delay):
            log.warning("a callback was scheduled with a NaN delay; it will never run: %r",
                        handle)
            return handle
        if math.isinf(delay):
            return handle
        self._relay(handle, self.time() + delay)
        return handle

    def _relay(self, handle: asyncio.Handle, deadline: float) -> None:
        """Run `handle` at `deadline`, re-arming the longest Qt timer until it is near."""
        if handle.cancelled():
            return
        remaining = deadline - self.time()
        if remaining <= MAX_TIMER_SECONDS:
            super()._add_callback(handle, max(0.0, remaining))
            return
        super()._add_callback(asyncio.Handle(self._relay, (handle, deadline), self),
                              MAX_TIMER_SECONDS)
