"""The app's loop takes every delay asyncio takes: infinite, NaN and longer than a Qt timer."""

from __future__ import annotations

import asyncio
import gc
import logging
import math
from collections.abc import AsyncIterator

import anyio
import pytest
import qasync

from qoder_desktop.ui import event_loop as event_loop_module
from qoder_desktop.ui.event_loop import MAX_TIMER_SECONDS, AppEventLoop


def test_plain_qasync_cannot_sleep_forever(loop: AppEventLoop, qapp: object) -> None:
    """The defect the app's loop exists for (if qasync fixes it, this class can go)."""
    plain = qasync.QEventLoop(qapp)
    try:
        with pytest.raises(OverflowError):
            plain.call_later(math.inf, lambda: None)
    finally:
        plain.close()
        asyncio.set_event_loop(loop)


@pytest.mark.parametrize("sleep", [lambda: asyncio.sleep(math.inf), anyio.sleep_forever],
                         ids=["asyncio.sleep(inf)", "anyio.sleep_forever"])
def test_sleeping_forever_waits_until_cancelled(loop: AppEventLoop, sleep) -> None:  # type: ignore[no-untyped-def]
    async def main() -> str:
        sleeper = asyncio.ensure_future(sleep())
        for _ in range(5):
            await asyncio.sleep(0)
        assert not sleeper.done()
        sleeper.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sleeper
        return "cancelled"

    assert loop.run_until_complete(main()) == "cancelled"


def test_an_infinite_cancel_scope_deadline_is_no_error(loop: AppEventLoop) -> None:
    async def main() -> bool:
        with anyio.CancelScope(deadline=math.inf) as scope:
            await asyncio.sleep(0.01)
            scope.deadline = anyio.current_time() + 1e12  # far, but finite
            await asyncio.sleep(0.01)
        return scope.cancelled_caught

    assert loop.run_until_complete(main()) is False


@pytest.mark.parametrize("delay", [math.inf, math.nan, 10 * MAX_TIMER_SECONDS, 1e300])
def test_far_or_never_callbacks_do_not_run_and_can_be_cancelled(
        loop: AppEventLoop, delay: float) -> None:
    ran: list[str] = []

    async def main() -> None:
        later = loop.call_later(delay, ran.append, "later")
        at = loop.call_at(loop.time() + delay, ran.append, "at")
        soon = asyncio.Event()
        loop.call_later(0.02, soon.set)
        await soon.wait()
        later.cancel()
        at.cancel()
        assert later.cancelled() and at.cancelled()

    loop.run_until_complete(main())
    assert ran == []


def test_a_cancelled_callback_gives_up_its_qt_timer(loop: AppEventLoop) -> None:
    """Every `wait_for` that finishes early cancels its timeout: a day of requests must
    not leave a day of armed Qt timers behind (qasync keeps them until they fire)."""
    async def main() -> list[int]:
        before = loop.timers_armed()
        for _ in range(200):
            await asyncio.wait_for(asyncio.sleep(0), 3600)  # its timeout is cancelled
        after = loop.timers_armed()
        ran: list[str] = []
        kept = loop.call_later(0.01, ran.append, "kept")
        loop.call_later(3600, ran.append, "cancelled").cancel()
        own: list[asyncio.Handle] = []
        own.append(loop.call_later(0.01, lambda: own[0].cancel()))  # cancels itself running
        while not ran:
            await asyncio.sleep(0.005)
        assert ran == ["kept"] and not kept.cancelled()
        return [before, after, loop.timers_armed()]

    before, after, at_end = loop.run_until_complete(main())
    assert after <= before + 2
    assert at_end <= before + 2


def test_a_nan_delay_is_logged(loop: AppEventLoop, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="qoder_desktop.ui.event_loop")
    loop.call_later(math.nan, lambda: None).cancel()
    assert "NaN delay" in caplog.text


def test_a_delay_longer_than_a_qt_timer_still_fires_in_order(
        loop: AppEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the longest Qt timer shrunk to 20 ms, a 150 ms callback is relayed and runs
    between its neighbours; a cancelled relayed callback never runs."""
    monkeypatch.setattr(event_loop_module, "MAX_TIMER_SECONDS", 0.02)
    order: list[str] = []

    async def main() -> None:
        done = asyncio.Event()
        loop.call_later(0.01, order.append, "short")
        loop.call_later(0.15, order.append, "relayed")
        loop.call_later(0.15, order.append, "cancelled").cancel()
        loop.call_at(loop.time() + 0.3, order.append, "relayed by call_at")
        loop.call_later(0.5, done.set)
        await done.wait()

    loop.run_until_complete(main())
    assert order == ["short", "relayed", "relayed by call_at"]


@pytest.mark.asyncio
async def test_async_tests_run_on_the_app_loop() -> None:
    """tests/conftest.py puts every async test on the loop the app runs (a defect of
    qasync must fail the tests, not only the app)."""
    assert type(asyncio.get_running_loop()) is AppEventLoop


def test_a_dropped_async_generator_is_closed_on_the_loop(loop: AppEventLoop) -> None:
    """Its ``finally`` may await (qasync alone leaves it to the garbage collector)."""
    closed: list[str] = []

    async def numbers() -> AsyncIterator[int]:
        try:
            yield 1
            yield 2
        finally:
            await asyncio.sleep(0)
            closed.append("closed on the loop")

    async def main() -> None:
        async for _ in numbers():
            break
        gc.collect()
        for _ in range(10):
            await asyncio.sleep(0)

    loop.run_until_complete(main())
    assert closed == ["closed on the loop"]


def test_an_unfinished_async_generator_is_closed_at_shutdown(loop: AppEventLoop) -> None:
    closed: list[str] = []
    kept: list[AsyncIterator[int]] = []

    async def numbers() -> AsyncIterator[int]:
        try:
            yield 1
        finally:
            await asyncio.sleep(0)
            closed.append("closed")

    async def main() -> None:
        kept.append(numbers())
        await anext(kept[0])

    loop.run_until_complete(main())
    loop.run_until_complete(loop.shutdown_asyncgens())
    assert closed == ["closed"]


def test_closing_deletes_the_qt_helpers_in_the_loops_thread(qapp: object) -> None:
    """Not left to a garbage collection that may run in another thread (a crash)."""
    import shiboken6

    own = AppEventLoop(qapp)
    timer = own._timer
    own.close()
    assert own.is_closed() and not shiboken6.isValid(timer)
    own.close()  # a second close is harmless


def test_a_thread_that_finishes_after_the_loop_closed_does_not_crash_it(qapp: object) -> None:
    """A worker's result handed back after close is refused, as asyncio refuses it; on
    plain qasync it emitted through a deleted Qt object (the process died)."""
    import concurrent.futures
    import threading

    own = AppEventLoop(qapp)
    release = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as worker:  # not the loop's executor
        future = own.run_until_complete(_wrap(own, worker.submit(release.wait, 10)))
        own.close()
        release.set()
        assert future.result(timeout=10) is True  # the worker finished and its callback ran
    with pytest.raises(RuntimeError, match="closed"):
        own.call_soon_threadsafe(lambda: None)


async def _wrap(loop: AppEventLoop, job: object) -> object:
    """`job` (a concurrent future) as an asyncio future of `loop`, handed back unawaited."""
    asyncio.wrap_future(job, loop=loop)  # type: ignore[arg-type]
    return job


def test_callbacks_in_the_last_pass_of_run_until_complete_see_their_loop(
        loop: AppEventLoop) -> None:
    """qasync runs Qt's events once more after the loop stopped; a task stepped there
    (a server's sleep timer that comes due) must still find its running loop."""
    seen: list[object] = []

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        # runs after run_until_complete's own done-callback has stopped the loop
        task.add_done_callback(lambda _task: loop.call_soon(
            lambda: seen.append(asyncio._get_running_loop())))

    loop.run_until_complete(main())
    assert seen == [loop]


def test_a_callback_qt_runs_between_runs_sees_its_loop(loop: AppEventLoop,
                                                       qapp: object) -> None:
    """pytest-qt (and any Qt code) processes events between the loop's runs."""
    seen: list[object] = []
    loop.call_soon(lambda: seen.append(asyncio._get_running_loop()))
    for _ in range(5):
        qapp.processEvents()  # type: ignore[attr-defined]
    assert seen == [loop]
    assert asyncio._get_running_loop() is None


def test_work_handed_to_threads_starts_them_only_as_needed(qapp: object) -> None:
    """`asyncio.to_thread` jobs that come one at a time share one worker thread, and a
    burst never runs more than `WORKER_THREADS` at once; qasync's own executor started
    ten threads at the first job and kept them all."""
    import threading

    from qoder_desktop.ui.event_loop import WORKER_THREADS

    def workers() -> set[str]:
        return {thread.name for thread in threading.enumerate()
                if thread.name.startswith("qoder-desktop-worker")}

    before = workers()  # other loops' workers (the suite's own loop), left alone
    own = AppEventLoop(qapp)
    try:
        assert workers() == before  # none before the first job
        for _ in range(5):
            own.run_until_complete(asyncio.to_thread(threading.get_ident))
        assert len(workers() - before) == 1

        running = 0
        most = 0
        lock = threading.Lock()
        release = threading.Event()

        def job() -> None:
            nonlocal running, most
            with lock:
                running += 1
                most = max(most, running)
            release.wait(10)
            with lock:
                running -= 1

        async def burst() -> None:
            jobs = [asyncio.ensure_future(asyncio.to_thread(job))
                    for _ in range(WORKER_THREADS * 2)]
            while most < WORKER_THREADS:
                await asyncio.sleep(0.01)
            release.set()
            await asyncio.gather(*jobs)

        own.run_until_complete(asyncio.wait_for(burst(), 20))
        assert most == WORKER_THREADS
        assert len(workers() - before) == WORKER_THREADS
    finally:
        release.set()
        own.close()
    assert workers() == before  # closing the loop ends its workers
