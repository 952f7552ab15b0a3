"""The layering is a test, not a convention: the core never imports Qt.

The package contracts (layers, independent adapters, views without SDKs) are
import-linter contracts in pyproject.toml, run by scripts/test.sh (`lint-imports`).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import qoder_desktop

PACKAGE = Path(qoder_desktop.__file__).parent
QT_MODULES = ("PySide6", "qasync", "shiboken6")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _core_modules() -> list[Path]:
    return [path for path in PACKAGE.rglob("*.py") if (PACKAGE / "ui") not in path.parents]


def test_there_is_a_core_to_check() -> None:
    names = {path.name for path in _core_modules()}
    assert {"models.py", "broker.py", "questions.py"} <= names


def test_no_core_module_imports_qt() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in _core_modules()
        for name in _imports(path)
        if name.split(".")[0] in QT_MODULES
    ]
    assert offenders == []


def test_importing_the_core_loads_no_qt_at_run_time() -> None:
    """Catches indirect imports too: a fresh interpreter imports every core module."""
    modules = sorted(
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for path in _core_modules()
        if path.name != "__main__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}]\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=PACKAGE.parent)
    assert result.stdout.strip() == ""


def _imported_names(path: Path) -> set[str]:
    """Modules `path` imports anywhere (inside functions too), `from a import b` as `a.b`."""
    names = _imports(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_only_the_entry_point_imports_the_app_module() -> None:
    """`ui.app` starts `ui.start_up`, never the other way round: an import inside a
    function would hide the cycle from a reader, not from this test (nor from the
    import-linter layers contract app -> start_up -> wiring)."""
    importers = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                       if "qoder_desktop.ui.app" in _imported_names(path))
    assert importers == ["__main__.py"]
