#!/usr/bin/env python3
"""Render the app's and the tray's icons from their SVG artwork into the PNGs the app ships.

`resources/io.qoder.Desktop.svg` (the application icon) and `resources/tray-icon.svg`
become `qoder_desktop/ui/resources/<app-icon|tray-icon>-<size>.png`, one file for each
size `qoder_desktop.ui.icons` uses. The app builds its icons from these PNGs (Qt's PNG
reader is part of QtGui), so it never loads QtSvg (~1 MB in a running app) for them.
The PNGs are committed; tests/ui/test_icon_files.py renders them again into a temporary
folder and fails when they differ, so after editing the artwork run:

    python tools/render_icons.py              # render in place
    python tools/render_icons.py --out-dir DIR  # render somewhere else (used by the test)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTWORK_DIR = ROOT / "resources"
OUT_DIR = ROOT / "qoder_desktop" / "ui" / "resources"
sys.path.insert(0, str(ROOT))

from qoder_desktop.ui import icons  # noqa: E402  (from this checkout)

ARTWORK = {icons.APP_ICON: "io.qoder.Desktop.svg", icons.TRAY_ICON: "tray-icon.svg"}
SIZES = {icons.APP_ICON: icons.APP_ICON_SIZES, icons.TRAY_ICON: icons.TRAY_ICON_SIZES}


def render(svg: bytes, size: int):  # type: ignore[no-untyped-def]
    """`svg` drawn into a transparent square QImage of `size` pixels."""
    from PySide6.QtCore import QByteArray, QRectF, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(svg))
    if not renderer.isValid():
        raise SystemExit("the SVG artwork does not parse")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def main(argv: list[str] | None = None) -> int:
    """Render every icon size; return the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, source in ARTWORK.items():
        svg = (ARTWORK_DIR / source).read_bytes()
        for size in SIZES[name]:
            target = args.out_dir / icons.icon_file(name, size)
            if not render(svg, size).save(str(target), "PNG"):
                raise SystemExit(f"cannot write {target}")
            print(f"resources/{source} @ {size} px -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
