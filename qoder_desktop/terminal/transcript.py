"""Following a terminal session's transcript file on the app's loop while its CLI runs.

`TranscriptFollower` polls a `TranscriptReader` (see `transcript_reader` for what a poll
reads and how it stays bounded) every `POLL_SECONDS`, and the next slice soon while it
is behind. It polls only while its session may still write: it rests (its task ends,
its offset and state stay) once its CLI has exited and everything it wrote is read, or
after `IDLE_SECONDS` without new lines while the session has no open request.
`start()` on the session's next request goes on from the same offset, so no line is
lost or shown twice. Qt-free.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from enum import StrEnum

from qoder_desktop.domain.session_options import TranscriptEvent
from qoder_desktop.terminal.transcript_reader import (
    MAX_LINE,
    SLICE,
    SLICE_PAUSE,
    ResultSeen,
    TranscriptReader,
    skipped_note,
)

__all__ = ["IDLE_SECONDS", "MAX_LINE", "POLL_SECONDS", "SLICE", "Rest", "TranscriptFollower",
           "skipped_note"]

log = logging.getLogger(__name__)

POLL_SECONDS = 0.25
IDLE_SECONDS = 120.0
"""A follower rests after this long without new lines (and no open request)."""


class Rest(StrEnum):
    """Why a follower stopped polling."""

    CLI_EXITED = "cli exited"
    IDLE = "idle"


class TranscriptFollower(TranscriptReader):
    """Polls one transcript file on the running loop while its session may write.

    Args:
        path: the ``transcript_path`` the CLI reported (checked by the caller).
        session_id: the session the events belong to.
        on_event: receives each transcript event (the hub's ``add_transcript_line``).
        on_result: told of each tool result, with the call's name and input.
        writer_alive: True while the CLI writing the file runs (None: not known, so
            only idleness ends polling); see `bind_writer`.
        busy: True while the session has a request open (the follower never rests
            then: a result in the file withdraws the request).
        on_rest: told when the follower stops polling by itself, and why.
        idle_seconds: how long without new lines before it rests.
    """

    def __init__(self, path: str | os.PathLike[str], session_id: str,
                 on_event: Callable[[TranscriptEvent], None],
                 on_result: ResultSeen | None = None, *,
                 writer_alive: Callable[[], bool] | None = None,
                 busy: Callable[[], bool] = lambda: False,
                 on_rest: Callable[[Rest], None] | None = None,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        super().__init__(path, session_id, on_event, on_result)
        self._writer_alive = writer_alive
        self._busy = busy
        self._on_rest = on_rest
        self.idle_seconds = idle_seconds
        self.longest_poll = 0.0
        """The longest a poll of the follower's own took (seconds, wall clock)."""
        self._task: asyncio.Task[None] | None = None
        self.rests = 0
        """How often the follower stopped polling by itself."""

    @property
    def following(self) -> bool:
        """True while the follower polls its file."""
        return self._task is not None and not self._task.done()

    def bind_writer(self, writer_alive: Callable[[], bool] | None) -> None:
        """The CLI writing the file now (a resumed session runs in a new one)."""
        self._writer_alive = writer_alive

    # -- following -----------------------------------------------------------------------

    def start(self, interval: float = POLL_SECONDS) -> None:
        """Poll on the running loop every `interval` seconds until the follower rests or
        `stop()`; after a rest, polling goes on from the same offset."""
        if not self.following:
            self._task = asyncio.get_running_loop().create_task(
                self._follow(interval), name=f"transcript {self.session_id}")

    async def _follow(self, interval: float) -> None:
        quiet_since = time.monotonic()
        while True:
            began = time.perf_counter()
            offset = self.offset
            self.poll()
            self.longest_poll = max(self.longest_poll, time.perf_counter() - began)
            if self.behind or self.skipping:
                # Behind: the next slice soon, on a later loop turn, so the loop keeps turning.
                await asyncio.sleep(SLICE_PAUSE)
                continue
            now = time.monotonic()
            if self.offset != offset:
                quiet_since = now
            rest = self._rest_now(now - quiet_since)
            if rest is not None:
                self._rested(rest)
                return
            await asyncio.sleep(interval)

    def _rest_now(self, quiet: float) -> Rest | None:
        """Why to stop polling now (everything written is read), or None."""
        if self._busy():
            return None
        if self._writer_alive is not None and not self._writer_alive():
            # The CLI is gone, but it may have written after the last poll: read
            # again; rest once that read found the end.
            self.poll()
            return None if self.behind else Rest.CLI_EXITED
        return Rest.IDLE if quiet >= self.idle_seconds else None

    def _rested(self, why: Rest) -> None:
        self._task = None
        self.rests += 1
        log.debug("transcript of %s: resting (%s) at byte %d", self.session_id, why.value,
                  self.offset)
        if self._on_rest is not None:
            try:
                self._on_rest(why)
            except Exception:
                log.exception("a transcript rest handler failed")

    async def stop(self) -> None:
        """Stop polling; a poller that already died is logged, never raised."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        except Exception:
            # e.g. its timer fired while the loop was not running (Qt events processed
            # outside the loop, as pytest-qt does at teardown): the poller is gone anyway.
            log.warning("the transcript poller of %s had stopped with an error",
                        self.session_id, exc_info=True)
