"""Shared defences of the app's local sockets against a flood of connections.

A local process can open connections faster than anyone reads a log: the approval
gateway and the terminal hook socket both use these, so each limit exists once.

- `RateLimitedLog` lets a burst of like log records through, then one summary line per
  window ("… N more like this … were not logged"), on the loggers a flood would fill.
- `descriptor_budget` is the share of this process's file descriptors one listener may
  hold open, so a flood on one socket never starves the rest of the app.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

DEFAULT_BUDGET = 128
"""Connections a listener may hold where the descriptor limit is unknown or unlimited."""


def descriptor_budget(default: int = DEFAULT_BUDGET) -> int:
    """A quarter of this process's file-descriptor limit (the app needs the rest)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return default
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return default
    return max(8, soft // 4)


class RateLimitedLog(logging.Filter):
    """Lets `burst` records of one kind through per `window` seconds, then summarises.

    Records are alike when they come from the same logger with the same message
    template. The first like record after a quiet window says how many were dropped;
    `flush()` (called by `remove()`) logs the counts still owed.

    Args:
        burst: like records let through per window.
        window: seconds.
        loggers: the logger names `install()` attaches to.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, burst: int = 10, window: float = 10.0, *,
                 loggers: Iterable[str] = (),
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self.loggers = tuple(loggers)
        self._clock = clock
        self._seen: dict[tuple[str, str], list[float]] = {}
        """(logger, template) → [window start, count in window, dropped]."""
        self.dropped = 0
        """Records dropped so far (all kinds)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """True to log `record`; False drops it (counted)."""
        key = (record.name, str(record.msg))
        now = self._clock()
        state = self._seen.get(key)
        if state is None or now - state[0] >= self.window:
            dropped = int(state[2]) if state is not None else 0
            self._seen[key] = [now, 1, 0]
            if len(self._seen) > 1000:  # forget old kinds; a flood has few
                self._seen = {k: v for k, v in self._seen.items()
                              if now - v[0] < self.window or v[2]}
            if dropped:
                record.msg = f"{record.msg} [{dropped} more like this in the last " \
                             f"{self.window:.0f} s were not logged]"
            return True
        state[1] += 1
        if state[1] <= self.burst:
            return True
        state[2] += 1
        self.dropped += 1
        return False

    def flush(self) -> None:
        """Log one summary line for every kind with dropped records not yet reported."""
        for (name, template), state in list(self._seen.items()):
            if state[2]:
                dropped, state[2] = int(state[2]), 0
                logging.getLogger(name).warning("%d more like this were not logged: %s",
                                                dropped, template)
        self._seen.clear()

    def install(self) -> None:
        """Attach to every logger in `loggers`."""
        for name in self.loggers:
            logging.getLogger(name).addFilter(self)

    def remove(self) -> None:
        """Log what is still owed (`flush`), then detach again."""
        for name in self.loggers:
            logging.getLogger(name).removeFilter(self)
        self.flush()
