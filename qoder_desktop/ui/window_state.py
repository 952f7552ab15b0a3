"""Remembered window state (geometry, toolbars, splitters), kept apart from settings.

The state is a small JSON file whose values are Qt's own opaque blobs in base64. The
caller chooses the path (`AppPaths.window_state_file` in the app). A missing, unreadable
or corrupt file is not an error: the window simply keeps its default layout.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QMainWindow, QSplitter

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


def _encode(blob: QByteArray) -> str:
    return base64.b64encode(bytes(blob.data())).decode("ascii")


def _decode(text: object) -> QByteArray | None:
    if not isinstance(text, str):
        return None
    try:
        return QByteArray(base64.b64decode(text.encode("ascii"), validate=True))
    except (binascii.Error, ValueError):
        return None


def capture(window: QMainWindow, splitters: Mapping[str, QSplitter]) -> dict[str, object]:
    """The window's current state as a JSON-ready dict."""
    return {
        "version": FORMAT_VERSION,
        "geometry": _encode(window.saveGeometry()),
        "state": _encode(window.saveState(FORMAT_VERSION)),
        "splitters": {name: _encode(s.saveState()) for name, s in splitters.items()},
    }


def apply(data: Mapping[str, object], window: QMainWindow,
          splitters: Mapping[str, QSplitter]) -> bool:
    """Restore what `capture` produced; returns True when the geometry was restored."""
    if data.get("version") != FORMAT_VERSION:
        return False
    restored = False
    geometry = _decode(data.get("geometry"))
    if geometry is not None:
        restored = bool(window.restoreGeometry(geometry))
    state = _decode(data.get("state"))
    if state is not None:
        window.restoreState(state, FORMAT_VERSION)
    saved = data.get("splitters")
    if isinstance(saved, dict):
        for name, splitter in splitters.items():
            blob = _decode(saved.get(name))
            if blob is not None:
                splitter.restoreState(blob)
    return restored


def save_window_state(path: Path, window: QMainWindow,
                      splitters: Mapping[str, QSplitter]) -> None:
    """Write the window's state to `path` atomically (folders are created).

    Raises:
        OSError: when the file cannot be written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(capture(window, splitters), indent=2)
    fd, tmp = tempfile.mkstemp(prefix=".window-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def restore_window_state(path: Path, window: QMainWindow,
                         splitters: Mapping[str, QSplitter]) -> bool:
    """Restore the window's state from `path`; returns False when nothing was restored."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable window state %s: %s", path, exc)
        return False
    if not isinstance(data, dict):
        log.warning("ignoring window state %s: not a JSON object", path)
        return False
    return apply(data, window, splitters)
