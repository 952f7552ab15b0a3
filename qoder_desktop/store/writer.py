"""The store's one writer thread: database writes off the event loop, in order.

A synced SQLite commit takes milliseconds (``synchronous=FULL``), and a large row (a
10 MB question) much longer; on the event loop that is time the agent's CLI waits for
its hook or callback answer and the window does not repaint. `StoreWriter` runs such
writes on one thread of its own (so writes keep one order, and one connection — the
`Database`'s — does them):

* `run` (awaitable): the caller waits until the write is committed — a decision is
  durable before its answer goes back to the agent;
* `post` (fire and forget): for records whose caller need not wait (tool calls seen by
  hooks); they gather for `BATCH_WINDOW_S` and are committed together in one
  transaction. A crash can lose the last tenth of a second of tool events, never
  a decision.

`flush` waits until everything queued is written; readers call it first, so they see
every write made before.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from qoder_desktop.store.database import Database

log = logging.getLogger(__name__)

T = TypeVar("T")

BATCH_LIMIT = 500
"""Posted writes committed in one transaction at most."""

BATCH_WINDOW_S = 0.1
"""How long posted writes gather before they are committed together (an agent's tool
calls come every few tens of milliseconds: a window of 0.1 s commits several at once).

Only the first post of a window wakes the writer thread; the posts after it cost the
caller (a hook answer on the event loop) a list append, not a thread switch. Awaited
writes (`run`), `flush` and `close` cut the window short."""


class _Job:
    __slots__ = ("call", "future")

    def __init__(self, call: Callable[[], Any], future: Future[Any] | None) -> None:
        self.call = call
        self.future = future


class StoreWriter:
    """One thread that does a `Database`'s writes in the order they were handed in.

    Started on first use; `close` writes what is queued and stops the thread.
    """

    def __init__(self, db: Database) -> None:
        self._db = db
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._gathered: list[_Job] = []
        self._gather_lock = threading.Lock()
        self._hurry = threading.Event()
        self._closed = False

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the store writer is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, daemon=True,
                                                name="qoder-desktop-store-writer")
                self._thread.start()

    def submit(self, call: Callable[[], T]) -> Future[T]:
        """Queue `call`; the returned future holds its result (or its exception)."""
        future: Future[T] = Future()
        if self._on_writer_thread():
            _run_into(call, future)  # a write from inside a write: no waiting on ourselves
            return future
        self._ensure_thread()
        self._queue.put(_Job(call, future))
        return future

    def queue_in_order(self, call: Callable[[], T]) -> Future[T]:
        """Queue `call` behind everything posted or queued before it; returns at once.

        The returned future holds its result (or its exception); a write queued later
        runs after this one.
        """
        self._hand_over()
        return self.submit(call)

    async def run(self, call: Callable[[], T]) -> T:
        """Run `call` on the writer thread and wait (without blocking the loop) for it.

        What was posted before is written first (the ledger keeps its order).

        Raises:
            Exception: whatever `call` raised (e.g. `StorageError`).
        """
        return await asyncio.wrap_future(self.queue_in_order(call))

    def post(self, call: Callable[[], Any]) -> None:
        """Queue `call` without waiting; a failure is logged (the caller has moved on)."""
        if self._on_writer_thread():
            call()
            return
        self._ensure_thread()
        with self._gather_lock:
            first = not self._gathered
            self._gathered.append(_Job(call, None))
        if first:
            self._queue.put(_WAKE)

    def _hand_over(self, *, hurry: bool = True) -> None:
        """Move what was posted into the queue, ahead of what comes next."""
        with self._gather_lock:
            gathered, self._gathered = self._gathered, []
        for job in gathered:
            self._queue.put(job)
        if hurry:
            self._hurry.set()

    def flush(self, timeout: float | None = 30.0) -> None:
        """Wait until everything queued before this call is written."""
        if self._thread is None or self._on_writer_thread():
            return
        self._hand_over()
        self.submit(lambda: None).result(timeout)

    def close(self) -> None:
        """Write what is queued, then stop the thread; later writes raise."""
        self._hand_over()
        with self._lock:
            thread, self._closed = self._thread, True
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _on_writer_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def _work(self) -> None:
        while True:
            first = self._queue.get()
            if first is _WAKE:
                self._hurry.wait(BATCH_WINDOW_S)  # let more posts gather first
                self._hurry.clear()
                self._hand_over(hurry=False)
                continue
            jobs = [first]
            while len(jobs) < BATCH_LIMIT:
                try:
                    jobs.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            batch: list[_Job] = []
            for job in jobs:
                if job is _WAKE:
                    continue
                if job is not None and job.future is None:
                    batch.append(job)
                    continue
                if batch:
                    self._write_batch(batch)
                    batch = []
                if job is None:
                    return
                assert job.future is not None
                _run_into(job.call, job.future)
            if batch:
                self._write_batch(batch)

    def _write_batch(self, batch: list[_Job]) -> None:
        """Posted writes in one transaction; if that fails, one by one (each logged)."""
        if len(batch) > 1:
            try:
                with self._db.transaction("recording tool events"):
                    for job in batch:
                        job.call()
                return
            except Exception:
                log.warning("a batch of %d store writes failed; writing them one by one",
                            len(batch))
        for job in batch:
            try:
                job.call()
            except Exception:
                log.exception("a store write failed")


_WAKE = _Job(lambda: None, None)
"""Queued by the first post of a window: the writer waits the window, then takes them."""


def _run_into(call: Callable[[], Any], future: Future[Any]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = call()
    except BaseException as exc:
        future.set_exception(exc)
    else:
        future.set_result(result)
