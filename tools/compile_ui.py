#!/usr/bin/env python3
"""Compile every Qt Designer form in ui/ into qoder_desktop/ui/forms/.

`ui/<name>.ui` becomes `qoder_desktop/ui/forms/ui_<name>.py` (class `Ui_<Form>`), with
the Qt classes uic imports but the form never uses left out (`trim_unused_qt_imports`:
PySide6 builds a class, with its enums, the first time Python takes it from its module,
so each unused name cost start-up time).
The generated modules are committed; tests/ui/test_generated_forms.py regenerates them
into a temporary folder and fails when they differ, so edit the form and run:

    python tools/compile_ui.py            # regenerate in place
    python tools/compile_ui.py --check    # exit 1 when any module is stale
    python tools/compile_ui.py --out-dir DIR  # write somewhere else (used by the test)
"""

from __future__ import annotations

import argparse
import ast
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
    out_path.write_text(trim_unused_qt_imports(out_path.read_text(encoding="utf-8")),
                        encoding="utf-8")


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
