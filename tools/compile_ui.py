#!/usr/bin/env python3
"""Compile every Qt Designer form in ui/ into qoder_desktop/ui/forms/.

`ui/<name>.ui` becomes `qoder_desktop/ui/forms/ui_<name>.py` (class `Ui_<Form>`), with
the Qt classes uic imports but the form never uses left out (`trim_unused_qt_imports`:
PySide6 builds a class, with its enums, the first time Python takes it from its module,
so each unused name cost start-up time).
Each `obj.setX(Qt.Enum.Value)` becomes `obj.setProperty("x", <its number>)`
(`qt_enums_as_properties`): the first use of PySide6's `Qt` namespace builds its ~90 Python
enums, ~25 ms of the main window's start, and a Qt property takes the enum's number.
The generated modules are committed; tests/ui/test_generated_forms.py regenerates them
into a temporary folder and fails when they differ, so edit the form and run:

    python tools/compile_ui.py            # regenerate in place
    python tools/compile_ui.py --check    # exit 1 when any module is stale
    python tools/compile_ui.py --out-dir DIR  # write somewhere else (used by the test)
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMS_DIR = ROOT / "ui"
GENERATED_DIR = ROOT / "qoder_desktop" / "ui" / "forms"


def find_uic() -> str:
    """The pyside6-uic next to this Python, or the one on PATH."""
    beside = Path(sys.executable).with_name("pyside6-uic")
    if beside.exists():
        return str(beside)
    found = shutil.which("pyside6-uic")
    if not found:
        raise SystemExit("pyside6-uic not found; install PySide6 into this environment")
    return found


def output_name(form: Path) -> str:
    """The generated module's file name for a form: `ui_<stem>.py`."""
    return f"ui_{form.stem}.py"


def compile_form(form: Path, out_path: Path, uic: str | None = None) -> None:
    """Run pyside6-uic on one form (from the forms folder, so headers name only the file)."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([uic or find_uic(), form.name, "-o", str(out_path.resolve())],
                   cwd=form.parent, check=True)
    source = qt_enums_as_properties(out_path.read_text(encoding="utf-8"), form)
    out_path.write_text(trim_unused_qt_imports(source), encoding="utf-8")


_ENUM_SETTER = re.compile(r"^(?P<indent>\s*)(?P<target>self\.\w+)\.set(?P<name>\w+)"
                          r"\((?P<value>Qt\.\w+\.\w+)\)$", re.M)
_SPLITTER = re.compile(r"^(?P<head>\s*self\.\w+ = )QSplitter\((?P<parent>[\w.]+)\)$", re.M)
"""A splitter made with its parent as the one positional argument: PySide6 tells that
from `QSplitter(Qt.Orientation)` by building the `Qt` namespace; by keyword it does not."""
_SHORTCUT = re.compile(r"^(?P<head>\s*self\.\w+)\.setShortcut\((?P<keys>QCoreApplication"
                       r"\.translate\(.*\))\)$", re.M)
"""An action's shortcut set through `setShortcut`: PySide6 weighs its overloads (a
`QKeySequence.StandardKey`, keys of the `Qt` namespace) by building that namespace; the
`shortcut` property takes the text (as Designer's own loader sets it)."""
_TOP_TOOLBAR = re.compile(r"^(?P<indent>\s*)(?P<window>\w+)\.addToolBar\("
                          r"Qt\.ToolBarArea\.TopToolBarArea, (?P<bar>self\.\w+)\)$", re.M)


def qt_enums_as_properties(source: str, form: Path) -> str:
    """`source` with each setter given a `Qt` namespace enum turned into `setProperty`
    with the enum's number (checked to be a property of the widget's Qt class), and a
    toolbar added to the top area added without naming the area (the default)."""
    from PySide6 import QtCore, QtWidgets

    classes: dict[str, str] = dict(re.findall(r"^\s*(self\.\w+) = (\w+)\(", source, re.M))
    extends: dict[str, str] = dict(re.findall(r"<class>(\w+)</class>\s*<extends>(\w+)</extends>",
                                              form.read_text(encoding="utf-8")))

    def as_property(match: re.Match[str]) -> str:
        target, name, value = match["target"], match["name"], match["value"]
        class_name = classes.get(target, "")
        qt_class = getattr(QtWidgets, extends.get(class_name, class_name), None)
        prop = name[0].lower() + name[1:]
        if qt_class is None or qt_class.staticMetaObject.indexOfProperty(prop) < 0:
            raise SystemExit(f"{form.name}: {target} ({class_name}) has no property {prop!r}")
        _, enum_name, member = value.split(".")
        number = getattr(getattr(QtCore.Qt, enum_name), member).value
        return f'{match["indent"]}{target}.setProperty("{prop}", {number})  # {value}'

    source = _ENUM_SETTER.sub(as_property, source)
    source = _SHORTCUT.sub(r'\g<head>.setProperty("shortcut", \g<keys>)', source)
    source = _SPLITTER.sub(r"\g<head>QSplitter(parent=\g<parent>)", source)
    return _TOP_TOOLBAR.sub(r"\g<indent>\g<window>.addToolBar(\g<bar>)", source)


def trim_unused_qt_imports(source: str) -> str:
    """`source` with the names its top-level ``from PySide6… import`` lines bring in but
    the module never uses taken out (an import left with none is dropped)."""
    tree = ast.parse(source)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    lines = source.splitlines(keepends=True)
    parts: list[str] = []
    done = 0
    for node in tree.body:
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("PySide6")):
            continue
        kept = [alias.name for alias in node.names if (alias.asname or alias.name) in used
                and alias.asname is None]
        parts.append("".join(lines[done:node.lineno - 1]))
        if kept:
            parts.append(textwrap.fill(f"from {node.module} import ({', '.join(kept)})",
                                       width=88, subsequent_indent="    ",
                                       break_on_hyphens=False) + "\n")
        done = node.end_lineno or node.lineno
    parts.append("".join(lines[done:]))
    return "".join(parts)


def forms(forms_dir: Path = FORMS_DIR) -> list[Path]:
    """Every .ui form, sorted."""
    return sorted(forms_dir.glob("*.ui"))


def main(argv: list[str] | None = None) -> int:
    """Regenerate (or check) every form; return the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=GENERATED_DIR)
    parser.add_argument("--check", action="store_true",
                        help="compare against the committed modules instead of writing")
    args = parser.parse_args(argv)
    uic = find_uic()
    stale: list[str] = []
    for form in forms():
        target = args.out_dir / output_name(form)
        if args.check:
            scratch = Path(args.out_dir.parent, ".uic-check", output_name(form))
            compile_form(form, scratch, uic)
            if not target.exists() or target.read_text() != scratch.read_text():
                stale.append(str(target))
            shutil.rmtree(scratch.parent, ignore_errors=True)
        else:
            compile_form(form, target, uic)
            print(f"{form.relative_to(ROOT)} -> {target}")
    for path in stale:
        print(f"stale: {path}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
