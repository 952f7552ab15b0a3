"""Can this install serve Away mode? The "away mode" line of `qoder-desktop --self-check`.

Away mode's core is imported only when the person first uses it, and uvicorn imports its
protocol classes by name at run time, so an install (a frozen bundle above all) that
left one of them out, or the phone page's files, would fail only when Away mode is
turned on. The self-check proves it ahead: the core imports, uvicorn loads the protocols
Away mode's server configures, every file of the phone page is there (`index.html` and
each file it and its scripts name), `cryptography` makes a key and `segno` draws a
pairing QR code. Nothing listens and no key is kept.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING

from qoder_desktop.diagnostics.report import CheckResult, Status

if TYPE_CHECKING:
    from qoder_desktop.away.server import PageFiles

__all__ = ["LABEL", "check_away", "page_files", "uvicorn_protocols"]

LABEL = "away mode"
ENTRY = "index.html"
_NAMED = re.compile(r"""(?:src|href)="/static/([\w.-]+)"|from\s+["']\./([\w.-]+)["']""")
_ADVICE = ("reinstall Qoder Desktop (this install is incomplete); until then Away mode "
           "cannot start")


def uvicorn_protocols() -> list[str]:
    """What uvicorn imports by name for Away mode's listeners ("module:Class": its HTTP,
    WebSocket and lifespan protocols); the bundle lists their modules as hidden imports."""
    from uvicorn.config import HTTP_PROTOCOLS, LIFESPAN, WS_PROTOCOLS

    from qoder_desktop.away import server

    names = [HTTP_PROTOCOLS[server.HTTP_PROTOCOL], WS_PROTOCOLS[server.WS_PROTOCOL],
             LIFESPAN[server.LIFESPAN]]
    return [name for name in names if name]


def page_files(files: PageFiles | None = None) -> tuple[list[str], list[str]]:
    """The phone page's files found and missing: `index.html` and, in turn, each file
    it or a script names (`/static/NAME`, `from "./NAME"`), read as the server reads
    them (`files`: the package's own page by default)."""
    from qoder_desktop.away.server import PageFiles

    page = files if files is not None else PageFiles()
    found: list[str] = []
    missing: list[str] = []
    waiting = [ENTRY]
    while waiting:
        name = waiting.pop(0)
        if name in found or name in missing:
            continue
        data = page.read(name)
        if data is None:
            missing.append(name)
            continue
        found.append(name)
        if name.endswith((".html", ".js")):
            text = data.decode("utf-8", "replace")
            waiting += [a or b for a, b in _NAMED.findall(text)]
    return found, missing


def check_away(files: PageFiles | None = None) -> CheckResult:
    """Whether this install has all Away mode needs to serve the phone page."""
    try:
        importlib.import_module("qoder_desktop.away.mode")
        from uvicorn.importer import import_from_string

        for protocol in uvicorn_protocols():
            import_from_string(protocol)
        import cryptography
        import segno
        import uvicorn
        import websockets
        from cryptography.hazmat.primitives.asymmetric import ec

        ec.generate_private_key(ec.SECP256R1())
        segno.make("https://desk.test:8765/#pair=self-check", error="m", micro=False)
    except Exception as exc:  # (ImportError above all: any failure means it cannot run)
        return CheckResult(LABEL, Status.FAIL, f"cannot load a part of Away mode: "
                           f"{type(exc).__name__}: {exc}", _ADVICE)
    found, missing = page_files(files)
    if missing:
        return CheckResult(LABEL, Status.FAIL, "the phone page is incomplete: missing "
                           + ", ".join(missing), _ADVICE)
    versions = ", ".join(f"{module.__name__} {getattr(module, '__version__', '?')}"
                         for module in (uvicorn, websockets, cryptography, segno))
    return CheckResult(LABEL, Status.OK, f"can serve the phone page ({', '.join(found)}); "
                       f"{versions}")
