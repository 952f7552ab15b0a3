"""PySide6's per-import source check keeps no copy of the sources (issue #15: ~23 MB in an
idle app) and still tells modules that use PySide6 from those that do not."""

from __future__ import annotations

import importlib
import linecache
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import qoder_desktop.ui  # noqa: F401 (applies the check's replacement, as the app does)
from qoder_desktop.ui.pyside_scan import read_sources_once


@pytest.fixture
def module_dir(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [name for name in sys.modules if name.startswith("scan_probe_")]:
        del sys.modules[name]


def test_modules_imported_after_pyside_leave_no_source_in_memory(module_dir: Path) -> None:
    (module_dir / "scan_probe_qt.py").write_text(
        "from PySide6.QtCore import QObject\n\nVALUE = QObject\n", encoding="utf-8")
    (module_dir / "scan_probe_plain.py").write_text("VALUE = 'no Qt here'\n" * 2000,
                                                     encoding="utf-8")
    importlib.invalidate_caches()
    __import__("scan_probe_qt")  # an import statement: PySide6 hooks `__import__`
    __import__("scan_probe_plain")

    feature = sys.modules["shibokensupport.feature"]
    assert feature.pyside_feature_dict["scan_probe_qt"] == 0  # uses PySide6
    assert feature.pyside_feature_dict["scan_probe_plain"] == -1  # ignored by features
    cached = {Path(name).name for name in linecache.cache}
    assert not cached & {"scan_probe_qt.py", "scan_probe_plain.py"}


def test_the_replacement_is_applied_once() -> None:
    feature = sys.modules["shibokensupport.feature"]
    applied = feature._mod_uses_pyside
    assert read_sources_once() is True
    assert feature._mod_uses_pyside is applied
