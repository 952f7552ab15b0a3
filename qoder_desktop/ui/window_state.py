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
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

from qoder_desktop.config.private_file import write_private

log = logging.getLogger(__name__)

FORMAT_VERSION = 1

FRAME_ALLOWANCE = (16, 40)
"""Room left for the window manager's frame and title bar (width, height), in pixels:
before the first show Qt does not know the frame, and `geometry()` excludes it."""


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
    """Write the window's state to `path` atomically, for the user only (folders are
    created).

    Raises:
        OSError: when the file cannot be written.
    """
    write_private(Path(path), json.dumps(capture(window, splitters), indent=2))


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


def fitted_rect(wanted: QRect, available: QRect) -> QRect:
    """`wanted` (the frame's top-left, the client area's size) shrunk so it and the frame
    allowance fit `available`, and moved inside it.

    A rectangle whose top-left lies off the screen is centred instead.
    """
    width = min(wanted.width(), available.width() - FRAME_ALLOWANCE[0])
    height = min(wanted.height(), available.height() - FRAME_ALLOWANCE[1])
    rect = QRect(wanted.x(), wanted.y(), max(1, width), max(1, height))
    if not available.contains(wanted.topLeft()):
        rect.moveCenter(available.center())
    right = available.right() - FRAME_ALLOWANCE[0]
    bottom = available.bottom() - FRAME_ALLOWANCE[1]
    if rect.right() > right:
        rect.moveRight(right)
    if rect.bottom() > bottom:
        rect.moveBottom(bottom)
    rect.moveLeft(max(rect.left(), available.left()))
    rect.moveTop(max(rect.top(), available.top()))
    return rect


def screen_of(window: QWidget) -> QScreen | None:
    """The screen the window is on (or will open on): its own, else the primary one."""
    return window.screen() or QGuiApplication.primaryScreen()


def fit_to_screen(window: QWidget, screen: QScreen | None = None, *,
                  center: bool = False) -> None:
    """Shrink and move `window` so all of it (frame included) lies on the screen's
    available area (the part no panel or tray takes); `center` centres it there."""
    screen = screen or screen_of(window)
    if screen is None or window.isMaximized() or window.isFullScreen():
        return  # the window manager fits those
    available = screen.availableGeometry()
    wanted = QRect(window.pos(), window.size())
    fitted = fitted_rect(wanted, available)
    if center:
        fitted.moveCenter(available.center())
        fitted.moveTop(max(available.top(), fitted.top() - FRAME_ALLOWANCE[1] // 2))
    minimum = window.minimumSizeHint().expandedTo(window.minimumSize())
    if fitted.width() < minimum.width() or fitted.height() < minimum.height():
        log.info("the screen (%dx%d) is smaller than the window's minimum (%dx%d)",
                 available.width(), available.height(), minimum.width(), minimum.height())
    if fitted != wanted:
        window.resize(fitted.size())
        window.move(fitted.topLeft())
