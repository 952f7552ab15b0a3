"""Print the modules of qoder_desktop that no test imports (or mirrors).

A module only reached through others is tested at most by accident: what it decides is
nobody's assertion. The walk reads every file under tests/ (its helpers too) and
collects what it imports, by name: `import a.b`, `from a.b import c` (c a module or a
name of a.b). A module whose mirror exists (`qoder_desktop/ui/control/approvals.py` →
`tests/ui/control/test_approvals.py`) counts as tested too: such a test may drive it
through the app's wiring. Package `__init__` modules and the generated Qt Designer forms
(`ui/forms/`, proven by tests/ui/test_generated_forms.py) are left out.

    python tools/untested_modules.py          # one module a line
    python tools/untested_modules.py --count  # and how many
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "qoder_desktop"
SKIPPED_PARTS = ("ui/forms/", "scripted_model/scenarios/")


def package_modules() -> set[str]:
    """Every module of qoder_desktop (dotted), without packages' `__init__` and forms."""
    modules = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(ROOT).with_suffix("")
        if path.name == "__init__.py" or any(part in path.as_posix() for part in SKIPPED_PARTS):
            continue
        modules.add(".".join(relative.parts))
    return modules


def imported_names(path: Path) -> set[str]:
    """Dotted names `path` imports: each module, and each `module.name` it takes."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return names


def mirror(module: str) -> Path:
    """Where the test file of `module` (dotted) lives in the mirrored tree."""
    *folders, name = module.split(".")[1:]
    return ROOT.joinpath("tests", *folders, f"test_{name}.py")


def untested_modules() -> list[str]:
    """The modules of qoder_desktop that no file under tests/ imports or mirrors, sorted."""
    imported: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        imported |= imported_names(path)
    return sorted(module for module in package_modules() - imported
                  if not mirror(module).exists())


def main(argv: list[str]) -> int:
    """Print the untested modules (and, with --count, how many of how many)."""
    untested = untested_modules()
    print("\n".join(untested))
    if "--count" in argv:
        print(f"{len(untested)} of {len(package_modules())} modules: no test imports or "
              "mirrors them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
