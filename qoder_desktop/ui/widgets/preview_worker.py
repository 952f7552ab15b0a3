"""Sanitize long previews on a worker thread and hand the result back to the GUI thread.

`sanitize_preview` is pure Python on an immutable string (Qt-free core), so it can run
on a thread of its own; the GUI thread only waits for the interpreter lock in slices
(`sys.getswitchinterval`, 5 ms), not for the whole pass (~30 ms for 64 KiB of HTML,
several times that on a loaded machine). One worker: previews come one at a time, and
a newer request supersedes an older one where it is handed back (the caller checks).

The hand-back goes through a queued signal of one `QObject` made in the GUI thread and
kept for the life of the process, so a result never runs in the worker thread and never
meets a deleted object.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from PySide6.QtCore import QObject, Qt, Signal

from qoder_desktop.preview.sanitize import SanitizedPreview, sanitize_preview

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_handback: _Handback | None = None


class _Handback(QObject):
    """Runs callables on the thread it lives in (the GUI thread), queued."""

    done = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.done.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def _run(self, callback: Callable[[], None]) -> None:
        callback()


def sanitize_later(text: str, kind: str | None,
                   then: Callable[[SanitizedPreview | BaseException], None]) -> None:
    """Sanitize on the worker thread; call `then(result)` in a later GUI loop turn.

    Call from the GUI thread. `then` gets the `SanitizedPreview`, or the exception the
    sanitizer raised (the caller fails closed: it shows no preview).
    """
    global _pool, _handback
    with _lock:
        if _handback is None:
            _handback = _Handback()
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="preview-sanitize")
        handback, pool = _handback, _pool

    def finished(future: Future[SanitizedPreview]) -> None:
        error = future.exception()
        result: SanitizedPreview | BaseException = error if error else future.result()
        handback.done.emit(partial(then, result))

    try:
        pool.submit(sanitize_preview, text, kind).add_done_callback(finished)
    except RuntimeError as exc:  # the interpreter is shutting down: no preview, say so
        handback.done.emit(partial(then, exc))
