"""The committed modules in qoder_desktop/ui/forms/ match their Designer forms."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORMS = sorted((ROOT / "ui").glob("*.ui"))
GENERATED = ROOT / "qoder_desktop" / "ui" / "forms"
_VERSION_LINE = re.compile(r"^## Created by: Qt User Interface Compiler version .*$", re.M)


def _normalized(text: str) -> str:
    """Drop the uic version line, which changes with every PySide6 release."""
    return _VERSION_LINE.sub("## Created by: Qt User Interface Compiler", text)


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("uic")
    subprocess.run([sys.executable, str(ROOT / "tools" / "compile_ui.py"), "--out-dir",
                    str(out)], check=True, capture_output=True, text=True)
    return out


def test_there_are_forms() -> None:
    names = {form.name for form in FORMS}
    assert {"approval_dialog.ui", "question_dialog.ui", "plan_dialog.ui"} <= names


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.name)
def test_generated_module_matches_its_form(form: Path, regenerated: Path) -> None:
    name = f"ui_{form.stem}.py"
    committed = GENERATED / name
    assert committed.exists(), f"{name} is missing: run python tools/compile_ui.py"
    fresh = (regenerated / name).read_text(encoding="utf-8")
    assert _normalized(committed.read_text(encoding="utf-8")) == _normalized(fresh), (
        f"{name} is stale: run python tools/compile_ui.py and commit the result")


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.name)
def test_a_generated_module_takes_only_the_qt_classes_it_uses(form: Path) -> None:
    """PySide6 builds a class (and its enums) when it is first taken from its module:
    an unused name in a form's imports is start-up time for nothing."""
    import ast

    tree = ast.parse((GENERATED / f"ui_{form.stem}.py").read_text(encoding="utf-8"))
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    imported = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("PySide6") for alias in node.names}
    assert imported and imported <= used, sorted(imported - used)
