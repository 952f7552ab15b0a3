"""PySide6 asks of every module imported after it whether it uses PySide6; answer without
keeping its source, and import what needs no Qt before it.

PySide6's import hook (`shibokensupport.feature`, for `from __feature__ import …`) wraps
every import statement run after it and reads the whole source of each newly imported
module with `inspect.getsource`, which goes through `linecache`: the source of every
module imported after PySide6 (the SDKs, mcp, pydantic, uvicorn… ~740 files) stayed in
memory as lists of lines, ~23 MB in an idle app, and reading it that way cost start-up
time. `read_sources_once` gives the hook the same answer ("PySide6" occurs in the
module's source file) from one plain read of the file, and without any read for the
standard library's modules, which never name PySide6 (most of those checked before the
main window's first frame: ~1.7 ms of reads); `prepare_imports` first imports
the Qt-free modules the window needs before its first paint, which the hook then never
sees.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from types import ModuleType

from qoder_desktop.diagnostics.memory import pause_collection, resume_collection

QT_FREE_FIRST: tuple[str, ...] = ("qoder_desktop.cli", "qoder_desktop.domain.kinds")
"""Qt-free modules `run_gui` needs before the first frame, imported before PySide6
(asyncio, the database, pydantic and our models are not among them: they load after
the frame)."""

_MARK = "_qoder_reads_once"
_STDLIB = os.path.dirname(os.__file__) + os.sep
"""The standard library's folder: no module in it names PySide6, so none is read."""


def _source_mentions_pyside(module: ModuleType,
                            fallback: Callable[[ModuleType], bool]) -> bool:
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return fallback(module)  # built-in, extension or frozen: PySide's own answer
    if path.startswith(_STDLIB) and os.sep + "site-packages" + os.sep not in path:
        return False  # (typing, argparse, os…: most of the modules checked before the frame)
    try:
        with open(path, "rb") as source:
            return b"PySide6" in source.read()
    except OSError:
        return fallback(module)


def prepare_imports() -> None:
    """Import `QT_FREE_FIRST`, then PySide6's base (shiboken6) with its check made cheap.

    When PySide6 is already loaded (a test, a benchmark), its check is made cheap first.
    Automatic garbage collection is off meanwhile (`memory.pause_collection`).
    """
    paused_here = pause_collection()
    try:
        read_sources_once()
        for name in QT_FREE_FIRST:
            importlib.import_module(name)
        importlib.import_module("shiboken6")  # loads shibokensupport.feature, patched below
        read_sources_once()
    finally:
        if paused_here:
            resume_collection()


def read_sources_once() -> bool:
    """Make PySide6's per-import source check read each file once and keep nothing.

    Returns False when this PySide6 has no such check (then nothing is changed).
    """
    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(original):
        return False
    if getattr(original, _MARK, False):
        return True

    def mod_uses_pyside(module: ModuleType) -> bool:
        return _source_mentions_pyside(module, original)

    setattr(mod_uses_pyside, _MARK, True)
    feature._mod_uses_pyside = mod_uses_pyside  # type: ignore[attr-defined]
    return True
