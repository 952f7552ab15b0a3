"""Keeping a long-running app's memory and garbage-collection pauses small.

The imports (Qt, pydantic, the agent SDKs) leave ~100k long-lived objects. Without
care, every full garbage collection walks them all and stalls the event loop for tens
of milliseconds, and the heap keeps the pages that start-up freed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys


def settle_memory(*, collect: bool = True) -> None:
    """Freeze what exists now out of later collections and give freed pages back.

    Args:
        collect: collect garbage first (once at start-up); skip it when a pause now
            would be felt (after a session started).
    """
    if collect:
        gc.collect()
    gc.freeze()
    _return_free_memory()


def _return_free_memory() -> None:
    """Give freed heap pages back to the OS (glibc only; elsewhere nothing happens)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass
