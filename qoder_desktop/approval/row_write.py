"""A request's ledger row, queued at once or once its dialog has painted.

The broker asks the person while the request's row is written. A writer thread running
while the dialog is built, shown and painted shares the CPU (and the interpreter) with
it, so a presenter (the UI's dialog queue) may hold the row back until the first frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import CancelledError, Future

from qoder_desktop.domain.models import ApprovalRequest, Decision

Presenter = Callable[[ApprovalRequest, Callable[[], None]], bool]
"""Told of a request just added: returns True when it will call the given function once
the request is in front of the person (its dialog painted), False when it will not."""

ROW_HOLD_MAX_S = 0.25
"""The longest a presenter may hold a request's row back (a dialog that never paints)."""


class RowWrite:
    """A request's ledger row: queued once, at once or when its dialog has painted.

    A writer thread running while the dialog is built and shown competes with it for
    the CPU (and the interpreter): the row waits for the first frame, at most
    `ROW_HOLD_MAX_S`, and is always queued before the decision's row.
    """

    def __init__(self, start: Callable[[], Future[None]]) -> None:
        self.future: Future[None] = Future()
        self._start: Callable[[], Future[None]] | None = start

    def start(self) -> None:
        """Queue the row (the first call only)."""
        start, self._start = self._start, None
        if start is not None:
            start().add_done_callback(self._copy)

    def _copy(self, written: Future[None]) -> None:
        problem = CancelledError() if written.cancelled() else written.exception()
        if problem is None:
            self.future.set_result(None)
        else:
            self.future.set_exception(problem)


def queue_row(start: Callable[[ApprovalRequest], Future[None]],
              request: ApprovalRequest) -> Future[None]:
    """`start(request)` (the ledger's `start_request`); a row that cannot even be queued
    is a failed write, never an exception."""
    try:
        return start(request)
    except Exception as exc:
        failed: Future[None] = Future()
        failed.set_exception(exc)
        return failed


def deny_unrecorded(decision: asyncio.Future[Decision], written: asyncio.Future[None]) -> None:
    """A request whose row could not be written is denied now (its dialog closes)."""
    problem = None if written.cancelled() else written.exception()
    if problem is None or decision.done():
        return
    decision.set_result(Decision.error(
        f"Qoder Desktop could not record the request, so it was denied: {problem}"))
