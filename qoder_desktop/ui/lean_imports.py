"""What the GUI process does to its imports before it imports them, for memory.

Called explicitly, in two halves, by the app: the entry point (`qoder_desktop.__main__.main`,
before it imports `ui.app`) calls `lean_imports_before_first_frame`, `ui.app` calls
`lean_imports_after_first_frame` once the main window's first frame is on screen and
before the libraries load (setting up the deferrals takes ~5 ms the frame need not wait
for); whatever imports the app's libraries up front (benchmarks, the view tests) calls
`apply_lean_imports`, both at once. Importing `qoder_desktop.ui` or any view changes
nothing in other libraries. Together they:

- (after the first frame) makes the imports of library parts the app never uses fail,
  so the libraries fall back without them (`diagnostics.memory.skip_unused_modules`:
  httpx's command-line client, the Secret Service backend without a session bus);
- (after the first frame) binds modules and names the libraries import but an idle app
  never calls without running them until first used (`diagnostics.deferred`:
  jsonschema, more_itertools, httpx, mcp's FastMCP, uvicorn's command line and
  reloader, cryptography's ciphers);
- (before the first frame) imports the Qt-free modules the window needs before PySide6,
  and makes PySide6's per-import source check read each file once instead of keeping
  it in `linecache` (`pyside_scan.prepare_imports`).

See docs/DESIGN-NOTES.md, "Start-up paints first", for what each saves.
"""

from __future__ import annotations

from qoder_desktop.diagnostics.memory import skip_unused_modules
from qoder_desktop.ui.pyside_scan import prepare_imports


def lean_imports_before_first_frame() -> None:
    """Pre-import and make PySide6's check cheap (call before the GUI's imports)."""
    prepare_imports()


def lean_imports_after_first_frame() -> None:
    """Skip and defer the library parts above (call before the libraries are imported)."""
    skip_unused_modules()


def apply_lean_imports() -> None:
    """Skip, defer and pre-import as described above, all at once (call before the GUI's
    imports; calling it again changes nothing)."""
    skip_unused_modules()
    prepare_imports()
