"""The icons the app ships as PNGs are the SVG artwork rendered at every size the app uses,
and building them needs no QtSvg."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from qoder_desktop.ui import icons

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "qoder_desktop" / "ui" / "resources"
EXPECTED = sorted([icons.icon_file(icons.APP_ICON, size) for size in icons.APP_ICON_SIZES]
                  + [icons.icon_file(icons.TRAY_ICON, size) for size in icons.TRAY_ICON_SIZES])


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("icons")
    subprocess.run([sys.executable, str(ROOT / "tools" / "render_icons.py"), "--out-dir",
                    str(out)], check=True, capture_output=True, text=True,
                   env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    return out


def test_the_package_ships_a_png_for_every_size_and_no_svg() -> None:
    assert sorted(path.name for path in SHIPPED.glob("*.png")) == EXPECTED
    assert list(SHIPPED.glob("*.svg")) == []  # the artwork lives in resources/


@pytest.mark.parametrize("name", EXPECTED)
def test_a_shipped_png_is_its_artwork_rendered_at_its_size(name: str, rendered: Path) -> None:
    shipped, fresh = QImage(str(SHIPPED / name)), QImage(str(rendered / name))
    size = int(name.rsplit("-", 1)[1].removesuffix(".png"))
    assert (shipped.width(), shipped.height()) == (size, size)
    assert shipped.hasAlphaChannel() and shipped.pixelColor(0, 0).alpha() == 0  # transparent
    assert shipped.pixelColor(size // 2, size // 2).alpha() == 255  # the shield, opaque
    assert shipped == fresh, (
        f"{name} differs from its artwork: run python tools/render_icons.py and commit it")


ICON_PROBE = """
import json, sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from qoder_desktop.ui import icons
app_icon, tray = icons.app_icon(), icons.tray_icon(3)
print(json.dumps({"app": sorted(s.width() for s in app_icon.availableSizes()),
                  "tray": sorted(s.width() for s in tray.availableSizes()),
                  "qtsvg": sorted(n for n in sys.modules if "QtSvg" in n)}))
"""


def test_the_icons_are_built_without_qtsvg(tmp_path: Path) -> None:
    import json

    done = subprocess.run([sys.executable, "-c", ICON_PROBE], cwd=str(tmp_path), check=True,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"app": list(icons.APP_ICON_SIZES), "tray": list(icons.TRAY_ICON_SIZES),
                      "qtsvg": []}


def test_resources_are_read_where_the_loader_has_no_get_data(monkeypatch) -> None:
    """The bundle's frozen importer has no `get_data`: there the stylesheet and icons
    are read through importlib.resources instead."""
    from qoder_desktop.ui import icons, resources

    class FrozenLikeLoader:  # a loader without `get_data`
        def __init__(self, loader: object) -> None:
            self.get_resource_reader = loader.get_resource_reader  # type: ignore[attr-defined]

    expected = icons.resource_bytes(icons.STYLESHEET)
    monkeypatch.setattr(resources.__spec__, "loader",
                        FrozenLikeLoader(resources.__spec__.loader))
    assert not hasattr(resources.__spec__.loader, "get_data")
    assert icons.resource_bytes(icons.STYLESHEET) == expected
    assert icons.stylesheet().strip()
