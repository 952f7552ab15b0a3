"""Run-time assets (icons, stylesheet) loaded from the installed package.

Everything is read through the loader of `qoder_desktop.ui.resources` (what
`pkgutil.get_data` does, without importing pkgutil before the first frame), so it
works the same from a source checkout, an installed wheel or a zip bundle. The icons
ship as PNGs of each size used, rendered from the SVG artwork in `resources/` by
`tools/render_icons.py`: Qt reads PNG without a plugin, and the app never loads QtSvg
(about 1 MB in a running app) to draw them.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui  # (classes built when first used: after the first frame)

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon, QPixmap

RESOURCE_PACKAGE = "qoder_desktop.ui.resources"
APP_ICON = "app-icon"
TRAY_ICON = "tray-icon"
STYLESHEET = "style.qss"

ACCENT = "#4263EB"
"""The app's accent colour (the shield in the icons)."""

BADGE_COLOR = "#E03131"

APP_ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
"""The sizes (pixels) the application icon ships in."""

TRAY_ICON_SIZES = (16, 22, 24, 32, 48, 64)
"""The sizes (pixels) the tray icon ships in (each drawn with its badge)."""


def resource_bytes(name: str) -> bytes:
    """The raw bytes of a shipped resource file.

    Raises:
        FileNotFoundError: when the package does not ship `name`.
    """
    from qoder_desktop.ui import resources as package  # (its loader reads the files)

    get_data = getattr(package.__spec__.loader, "get_data", None)
    folder = os.path.dirname(getattr(package, "__file__", None) or "")
    if get_data is None or not folder:  # (the bundle's frozen importer)
        from importlib import resources

        return resources.files(RESOURCE_PACKAGE).joinpath(name).read_bytes()
    return bytes(get_data(os.path.join(folder, name)))


def stylesheet() -> str:
    """The app's Qt stylesheet (QSS) as text."""
    return resource_bytes(STYLESHEET).decode("utf-8")


def icon_file(name: str, size: int) -> str:
    """The shipped PNG of icon `name` (`APP_ICON`, `TRAY_ICON`) at `size` pixels."""
    return f"{name}-{size}.png"


def icon_pixmap(name: str, size: int) -> QPixmap:
    """The shipped icon `name` at `size` pixels, read from its PNG.

    Raises:
        FileNotFoundError: when the package ships no such size.
        ValueError: when the file is not a PNG Qt can read.
    """
    pixmap = QtGui.QPixmap()
    if not pixmap.loadFromData(resource_bytes(icon_file(name, size)), "PNG"):
        raise ValueError(f"{icon_file(name, size)} is not a readable PNG")
    return pixmap


@functools.cache
def app_icon() -> QIcon:
    """The application icon (window, task bar, about box), rendered once: its eight
    sizes, ~0.37 MB of pixmaps, are shared by the application and every window that
    shows it (a QIcon copy shares its pixmaps)."""
    icon = QtGui.QIcon()
    for size in APP_ICON_SIZES:
        icon.addPixmap(icon_pixmap(APP_ICON, size))
    return icon


def badge_text(count: int) -> str:
    """The text drawn in a badge: the count, or `99+` for large numbers."""
    return "99+" if count > 99 else str(count)


def draw_badge(pixmap: QPixmap, count: int) -> QPixmap:
    """A copy of `pixmap` with `count` drawn as a red badge in its top-right corner.

    A count of zero (or less) returns an unchanged copy.
    """
    result = QtGui.QPixmap(pixmap)
    if count <= 0:
        return result
    size = min(result.width(), result.height())
    text = badge_text(count)
    diameter = size * (0.62 if len(text) == 1 else 0.7)
    width = diameter if len(text) == 1 else diameter * (1.0 + 0.28 * (len(text) - 1))
    width = min(width, float(size))
    rect = QtCore.QRectF(result.width() - width, 0, width, diameter)
    painter = QtGui.QPainter(result)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    painter.setPen(QtGui.QColor("#FFFFFF"))
    painter.setBrush(QtGui.QColor(BADGE_COLOR))
    painter.drawRoundedRect(rect, diameter / 2, diameter / 2)
    font = QtGui.QFont()
    font.setBold(True)
    font.setPixelSize(max(6, int(diameter * (0.68 if len(text) == 1 else 0.52))))
    painter.setFont(font)
    painter.drawText(rect, int(QtCore.Qt.AlignmentFlag.AlignCenter), text)
    painter.end()
    return result


def tray_icon(pending: int = 0) -> QIcon:
    """The tray icon, with the pending count drawn as a badge when it is above zero."""
    icon = QtGui.QIcon()
    for size in TRAY_ICON_SIZES:
        icon.addPixmap(draw_badge(icon_pixmap(TRAY_ICON, size), pending))
    return icon
