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


_ENUM_PROPERTY = re.compile(r"^\s*self\.(\w+)\.setProperty\(\"(\w+)\", (\d+)\)  # (Qt\.\w+\.\w+)$",
                            re.M)


_SHORTCUT_PROPERTY = re.compile(r"^\s*self\.(\w+)\.setProperty\(\"shortcut\", QCoreApplication"
                                r"\.translate\(\"\w+\", u\"([^\"]+)\", None\)\)$", re.M)


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.name)
def test_each_enum_given_as_a_number_reaches_its_widget(qapp, form: Path) -> None:  # type: ignore[no-untyped-def]
    """The forms set `Qt` namespace enums through properties, by number, and shortcuts
    as text (no `Qt` namespace before the first frame): each widget reads back the enum
    uic named, each action its keys."""
    import importlib

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDialog, QMainWindow

    module = importlib.import_module(f"qoder_desktop.ui.forms.ui_{form.stem}")
    source = (GENERATED / f"ui_{form.stem}.py").read_text(encoding="utf-8")
    ui_class = next(value for name, value in vars(module).items() if name.startswith("Ui_"))
    top = QMainWindow() if "QMainWindow" in form.read_text(encoding="utf-8") else QDialog()
    ui = ui_class()
    ui.setupUi(top)
    checked = 0
    for name, prop, number, enum in _ENUM_PROPERTY.findall(source):
        _, enum_name, member = enum.split(".")
        expected = getattr(getattr(Qt, enum_name), member)
        assert expected.value == int(number), (name, enum)
        widget = getattr(ui, name)
        assert getattr(widget, prop)() == expected, (name, prop)
        checked += 1
    for name, keys in _SHORTCUT_PROPERTY.findall(source):
        assert getattr(ui, name).shortcut().toString() == keys, name
        checked += 1
    assert checked == source.count('setProperty("')  # (every one of them checked)
    top.deleteLater()
