"""PySide6's per-import source check keeps no copy of the sources (~23 MB in an idle
app) and still tells modules that use PySide6 from those that do not."""

from __future__ import annotations

import importlib
import json
import linecache
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from qoder_desktop.ui.lean_imports import apply_lean_imports
from qoder_desktop.ui.pyside_scan import read_sources_once

apply_lean_imports()  # the check's replacement, as the app's entry point applies it


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


def test_a_standard_library_module_is_answered_without_reading_its_file(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    opened: list[str] = []
    real_open = builtins.open

    def watched_open(file: object, *args: object, **kwargs: object) -> object:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    feature = sys.modules["shibokensupport.feature"]
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    monkeypatch.delitem(feature.pyside_feature_dict, "colorsys", raising=False)
    monkeypatch.setattr(builtins, "open", watched_open)
    __import__("colorsys")  # an import statement: PySide6 hooks `__import__`
    monkeypatch.setattr(builtins, "open", real_open)
    assert feature.pyside_feature_dict["colorsys"] == -1  # does not use PySide6
    assert not [name for name in opened if name.endswith("colorsys.py")]


def test_the_replacement_is_applied_once() -> None:
    feature = sys.modules["shibokensupport.feature"]
    applied = feature._mod_uses_pyside
    assert read_sources_once() is True
    assert feature._mod_uses_pyside is applied


ORDER_PROBE = """
import json, linecache, sys
if sys.argv[1] == "qt-first":  # as in tests and benchmarks: PySide6 before the app
    import PySide6.QtWidgets
from qoder_desktop.ui.lean_imports import apply_lean_imports
apply_lean_imports()  # as the entry point does
import qoder_desktop.ui.app
import qoder_desktop.ui.wiring
print(json.dumps(sorted(name for name in linecache.cache if name.endswith(".py"))))
"""


@pytest.mark.parametrize("order", ["app-first", "qt-first"])
def test_no_source_is_kept_whichever_is_imported_first(order: str, tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", ORDER_PROBE, order], env=env,
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=60,
                          check=True)
    cached = json.loads(done.stdout.strip().splitlines()[-1])
    # Without the fix: ~200 files here (every module imported after PySide6); the few
    # left are those read before the fix could apply, or by other means.
    assert len(cached) < 20, cached
    assert not [name for name in cached if any(part in name for part in (
        "/pydantic/", "/asyncio/", "/qoder_desktop/domain/", "/qoder_desktop/ui/windows/"))]
