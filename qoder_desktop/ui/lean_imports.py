"""What the GUI process does to its imports before it imports them, for memory.

Called explicitly by the entry point (`qoder_desktop.__main__.main`, before it imports
`ui.app`) and by whatever runs the app as it does (benchmarks, the view tests);
importing `qoder_desktop.ui` or any view changes nothing in other libraries. It:

- makes the imports of library parts the app never uses fail, so the libraries fall
  back without them (`diagnostics.memory.skip_unused_modules`: httpx's command-line
  client, the Secret Service backend without a session bus);
- binds modules and names the libraries import but an idle app never calls without
  running them until first used (`diagnostics.deferred`: jsonschema, more_itertools,
  httpx, mcp's FastMCP, uvicorn's command line and reloader, cryptography's ciphers);
- imports the Qt-free modules the window needs before PySide6, and makes PySide6's
  per-import source check read each file once instead of keeping it in `linecache`
  (`pyside_scan.prepare_imports`).

See docs/DESIGN-NOTES.md, "Start-up paints first", for what each saves.
"""

from __future__ import annotations

from qoder_desktop.diagnostics.memory import skip_unused_modules
from qoder_desktop.ui.pyside_scan import prepare_imports


def apply_lean_imports() -> None:
    """Skip, defer and pre-import as described above (call before the GUI's imports;
    calling it again changes nothing)."""
    skip_unused_modules()
    prepare_imports()
