"""Run-time assets (icons, stylesheet) loaded from the installed package.

Everything is read with `pkgutil.get_data` from `qoder_desktop.ui.resources`, so it
works the same from a source checkout, an installed wheel or a zip bundle.
"""

from __future__ import annotations

import functools
import pkgutil
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui  # (classes built when first used: after the first frame)

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon, QPixmap

RESOURCE_PACKAGE = "qoder_desktop.ui.resources"
APP_ICON = "app-icon.svg"
TRAY_ICON = "tray-icon.svg"
STYLESHEET = "style.qss"

ACCENT = "#4263EB"
"""The app's accent colour (the shield in the icons)."""

BADGE_COLOR = "#E03131"

_ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


def resource_bytes(name: str) -> bytes:
    """The raw bytes of a shipped resource file.

    Raises:
        FileNotFoundError: when the package does not ship `name`.
    """
    data = pkgutil.get_data(RESOURCE_PACKAGE, name)  # (lighter than importlib.resources)
    if data is None:  # a loader that cannot read data files
        raise FileNotFoundError(f"{RESOURCE_PACKAGE} cannot read {name}")
    return data


def stylesheet() -> str:
    """The app's Qt stylesheet (QSS) as text."""
    return resource_bytes(STYLESHEET).decode("utf-8")


def render_svg(name: str, size: int) -> QPixmap:
    """Render a shipped SVG into a transparent square pixmap of `size` pixels."""
    from PySide6.QtSvg import QSvgRenderer  # (first needed after the window's first frame)

    renderer = QSvgRenderer(QtCore.QByteArray(resource_bytes(name)))
    pixmap = QtGui.QPixmap(size, size)
    pixmap.fill(QtCore.Qt.GlobalColor.transparent)
    painter = QtGui.QPainter(pixmap)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QtCore.QRectF(0, 0, size, size))
    painter.end()
    return pixmap


def _icon_from_svg(name: str) -> QIcon:
    icon = QtGui.QIcon()
    for size in _ICON_SIZES:
        icon.addPixmap(render_svg(name, size))
    return icon


@functools.cache
def app_icon() -> QIcon:
    """The application icon (window, task bar, about box), rendered once: its eight
    sizes, ~0.37 MB of pixmaps, are shared by the application and every window that
    shows it (a QIcon copy shares its pixmaps)."""
    return _icon_from_svg(APP_ICON)


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
    for size in (16, 22, 24, 32, 48, 64):
        icon.addPixmap(draw_badge(render_svg(TRAY_ICON, size), pending))
    return icon
