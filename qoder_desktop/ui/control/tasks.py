"""Background work of the UI: asyncio tasks whose references are kept, failures shown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 2.0
"""How long quitting waits for the cancelled background tasks to end."""


class Tasks:
    """Runs coroutines as tasks, keeps them alive, and tells the person about failures."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self._report = report
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run `coroutine` as a task whose reference is kept; a failure is reported as
        "<What> failed: <error>"."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                error = finished.exception()
                log.error("%s failed: %s", what, error)
                self._report(f"{what.capitalize()} failed: {error}")

        task.add_done_callback(done)
        return task

    async def close(self, timeout: float = CLOSE_WAIT_S) -> None:
        """Cancel the tasks still running (not the one calling) and wait for them to end
        (at most `timeout` seconds), so none is left pending when the loop stops."""
        current = asyncio.current_task()
        running = [task for task in self._tasks if task is not current and not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
