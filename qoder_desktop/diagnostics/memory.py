"""Keeping a long-running app's memory and garbage-collection pauses small.

The imports (Qt, pydantic, the agent SDKs) leave ~100k long-lived objects. Without
care, every full garbage collection walks them all and stalls the event loop for tens
of milliseconds, and the heap keeps the pages that start-up freed.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (loaded by `_libc` only: the entry point imports this module early)
    import ctypes

UNUSED_MODULES: tuple[str, ...] = ("httpx._main",)
"""Modules a library imports only to offer something the app never uses: httpx's command
line client (`httpx._main`, which loads rich and pygments: ~70 modules, ~3 MB). httpx
imports it only if it can (it falls back when the import fails)."""

UNREACHABLE_KEYRING_MODULES: tuple[str, ...] = ("secretstorage",)
"""The Secret Service client keyring's backend imports (with jeepney and cryptography:
~40 modules, ~7 MB RSS). It reaches the service only through the D-Bus session bus named by
``DBUS_SESSION_BUS_ADDRESS`` (jeepney has no other way to find it), so without that
variable the backend can never be used and keyring treats the failed import exactly like
the unreachable service: not a viable backend. With the variable set (any desktop
session) it is imported as before, without cryptography's bindings until a secret is
encrypted or decrypted (`deferred.DEFERRED_SUBMODULES`)."""


PYDANTIC_PLUGINS_OFF = ("PYDANTIC_DISABLE_PLUGINS", "__all__")
"""Pydantic's documented switch for its plugins, set unless the person set it. The app
uses none, and a plugin sees every value pydantic validates (tool inputs, settings):
no third-party code belongs on that path. Left on, pydantic looks for plugins at the
first model it builds, through ``importlib.metadata`` (with ``email`` and ``csv``:
~30 modules, ~2.5 MB) and a scan of every installed package's metadata; with it off,
``importlib.metadata`` is deferred (`deferred.DEFERRED_SUBMODULES`) and never runs in a
session that does not ask a package's version. The variable also reaches the processes
the app starts, where only pydantic reads it."""

_paused = False


def pause_collection() -> bool:
    """Turn automatic garbage collection off until `resume_collection` (start-up).

    Start-up creates ~50k long-lived objects (modules, classes, Qt wrappers): the ~100
    automatic collections it would trigger find next to nothing and cost ~20–40 ms before
    the first paint. Returns True when this call turned it off (False: it already was).
    """
    global _paused
    if not gc.isenabled():
        return False
    gc.disable()
    _paused = True
    return True


def resume_collection() -> None:
    """Turn automatic garbage collection back on if `pause_collection` turned it off."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


_holds = 0
_held_from_on = False


def hold_collection() -> Callable[[], None]:
    """Turn automatic garbage collection off until the returned `release()` is called.

    For a decision dialog on its way to its first frame: filling one leaves ~80 objects
    in the youngest generation, so about one request in nine tipped a collection onto
    that path (~0.6 ms; an older generation's, several ms); held, it runs just after
    the frame. Holds nest: the collector comes back on with the last release, if it was on
    before the first hold. Calling a `release` again does nothing.
    """
    global _holds, _held_from_on
    if _holds == 0:
        _held_from_on = gc.isenabled()
        gc.disable()
    _holds += 1
    released = False

    def release() -> None:
        global _holds
        nonlocal released
        if released:
            return
        released = True
        _holds -= 1
        if _holds == 0 and _held_from_on:
            gc.enable()

    return release


def skip_unused_modules() -> None:
    """Make the imports of `UNUSED_MODULES` fail, so the libraries fall back without them.

    Also `UNREACHABLE_KEYRING_MODULES` when no D-Bus session bus is named (see there),
    and the modules of `deferred.DEFERRED_MODULES` run only when first used. Pydantic's
    plugins are turned off (`PYDANTIC_PLUGINS_OFF`). Call before the libraries are
    imported; a module already imported is left alone.
    """
    from qoder_desktop.diagnostics.deferred import defer_modules

    os.environ.setdefault(*PYDANTIC_PLUGINS_OFF)
    defer_modules()
    skipped = UNUSED_MODULES
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        skipped += UNREACHABLE_KEYRING_MODULES
    for name in skipped:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # None: not importable


def settle_memory(*, collect: bool = True) -> None:
    """Freeze what exists now out of later collections and give freed pages back.

    Also drops the source lines `linecache` holds for files on disk (PySide6's import
    check and warnings read whole modules through it; a traceback reads them again when
    it needs them).

    Args:
        collect: collect garbage first (once at start-up); skip it when a pause now
            would be felt (after a session started).
    """
    drop_cached_sources()
    if collect:
        gc.collect()
    gc.freeze()
    return_free_memory()


def drop_cached_sources() -> int:
    """Forget the lines `linecache` read from files on disk; returns how many files.

    Entries registered without a file (code generated at run time, e.g. by attrs or
    dataclasses, kept with no modification time) stay: nothing could read them again.
    """
    import linecache

    dropped = [name for name, entry in list(linecache.cache.items())
               if len(entry) == 4 and entry[1] is not None]
    for name in dropped:
        linecache.cache.pop(name, None)
    return len(dropped)


MALLOC_ARENAS = 2
"""How many malloc arenas glibc may keep (`limit_malloc_arenas`)."""
_M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the arena limit (``malloc.h``)."""


def limit_malloc_arenas(count: int = MALLOC_ARENAS) -> bool:
    """Let glibc's malloc keep at most `count` arenas; True when the limit was set.

    By default glibc gives a thread that allocates while another holds an arena an arena
    of its own, up to eight per core, and keeps each one's freed pages: the app's worker,
    keyring, database and Qt threads each held one (~1 MB of RSS in all, measured with a
    live session) for a handful of small jobs. Two arenas are plenty for threads that
    mostly wait. An explicit ``MALLOC_ARENA_MAX`` in the environment wins; elsewhere than
    glibc nothing happens.
    """
    libc = _libc()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        return bool(libc.mallopt(_M_ARENA_MAX, count))
    except AttributeError:  # not glibc (musl has no mallopt)
        return False


def return_free_memory() -> bool:
    """Give freed heap pages back to the OS (glibc's ``malloc_trim``; elsewhere nothing
    happens). Returns True when the trim ran.

    glibc keeps the pages of freed memory inside its heap for later use: after a busy
    hour (thousands of dialogs, transcripts and ledger writes, freed again) the process
    holds megabytes no object uses. The app trims once after start-up, once its spare
    dialogs are built again (`ui.dialogs.spares`, ~0.4 ms) and when it has been idle for
    a while (`ui.idle_trim.IdleTrim`), when nothing is waiting.
    """
    libc = _libc()
    if libc is None:
        return False
    try:
        libc.malloc_trim(0)
    except AttributeError:  # not glibc
        return False
    return True


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library on Linux (None elsewhere, or when it cannot be loaded), loaded once:
    `ctypes.util.find_library` runs ``ldconfig -p`` in a child process (~2.5 ms), which
    a trim after every spare dialog's rebuild paid each time."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only here: the entry point imports this module before the first paint
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
