"""Modules the libraries import at start-up but an idle app never uses, run on first use.

`claude_agent_sdk` and the ``mcp`` server each ``import jsonschema`` at import time, and
use it only to validate the arguments of a call to an in-process tool (the SDK's
``create_sdk_mcp_server`` tools; the gateway's tool does not ask ``mcp`` to validate).
Importing it loads ~45 modules (jsonschema, referencing, rpds, attrs, its format
checkers): ~2.8 MB RSS that the idle app keeps for nothing.

`defer_modules` puts a `DeferredModule` in ``sys.modules`` for each of `DEFERRED_MODULES`:
``import jsonschema`` binds it without running it, and the first attribute it has not got
(``jsonschema.validate``, ``from jsonschema import ValidationError``) runs the module's
own code in it, once, so from then on it is the real module. The stdlib's
`importlib.util.LazyLoader` cannot do this here: its module loads on *any* attribute
access, including the ``__spec__`` that every later ``import jsonschema`` reads, so the
second library to import it would load it at once.

Importing this module changes nothing: the GUI calls `defer_modules` (through
`ui.lean_imports.lean_imports_after_first_frame`) before the libraries load.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (at run time this module imports next to nothing: it runs before
    from collections.abc import Sequence  # PySide6's import check is made cheap)
    from typing import Any

DEFERRED_MODULES: tuple[str, ...] = ("jsonschema", "more_itertools", "httpx")
"""Modules the libraries import with a plain ``import name`` but use only on a path an
idle app never takes:

- ``jsonschema``: see the module docstring;
- ``more_itertools`` (~0.4 MB): imported by keyring's helper ``jaraco.functools`` for
  functions keyring does not call;
- ``httpx`` (with idna: ~30 modules, ~1.6 MB): ``mcp.shared.session`` imports it for
  one status code it reads when a request times out; only mcp's HTTP clients (see
  ``mcp.client.session_group`` below) use more of it, and neither the SDKs nor the
  gateway (a server) are HTTP clients."""

_lock = threading.RLock()
_running: set[str] = set()


class DeferredModule(types.ModuleType):
    """A module whose code runs at the first access to an attribute it has not got.

    Until then it has only what the import system sets from its spec (``__name__``,
    ``__spec__``, ``__path__``, ``__file__``...), so imports that only bind it or look
    at its spec do not run it. Afterwards it is a plain module. Thread-safe: a second
    thread waits for the first one's run; an attribute looked up while the module's
    own code runs (a submodule importing from its package) is missing, as it would be
    in any module being imported.
    """

    def __getattr__(self, attribute: str) -> object:
        name = self.__name__
        spec = self.__spec__
        if attribute == "__path__" and spec is not None and spec.submodule_search_locations is None:
            # ``from package.module import name`` asks a plain module for it: not a use
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        run_deferred(self)
        try:
            return types.ModuleType.__getattribute__(self, attribute)
        except AttributeError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None


def run_deferred(module: types.ModuleType) -> None:
    """Run a `DeferredModule`'s own code now (once; nothing if it has run or is running)."""
    name = module.__name__
    with _lock:
        if isinstance(module, DeferredModule) and name not in _running:
            _running.add(name)
            try:
                spec = module.__spec__
                assert spec is not None and spec.loader is not None  # set by defer()
                spec.loader.exec_module(module)
                module.__class__ = types.ModuleType  # type: ignore[assignment]
            finally:
                _running.discard(name)


def defer(name: str) -> bool:
    """Make `name` a `DeferredModule` unless it is imported already or not installed.

    Returns True when it was deferred. A top-level module only (a submodule's package
    would be imported to find it).
    """
    if name in sys.modules or "." in name:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return False  # not installed: its import fails exactly as before
    module = importlib.util.module_from_spec(spec)
    module.__class__ = DeferredModule
    sys.modules[name] = module
    return True


def defer_modules() -> None:
    """Defer each of `DEFERRED_MODULES` and `DEFERRED_SUBMODULES` (call before the
    libraries are imported)."""
    for name in DEFERRED_MODULES:
        defer(name)
    for name, exported in DEFERRED_SUBMODULES.items():
        defer_submodule(name, exported)


DEFERRED_SUBMODULES: dict[str, tuple[str, ...]] = {
    "mcp.server.fastmcp": ("FastMCP",),
    "uvicorn.main": ("Server=uvicorn.server", "main", "run"),
    "uvicorn.supervisors": ("ChangeReload", "Multiprocess"),
    "mcp.client.session_group": ("ClientSessionGroup",),
    "cryptography.hazmat.primitives.ciphers": ("Cipher", "algorithms", "modes"),
    "importlib.metadata": ("entry_points", "version"),
}
"""Submodules the libraries import names from at import time but use only on a path an
idle app never takes, with those names:

- ``mcp.server.fastmcp`` (~55 modules with pydantic_settings, dotenv and its auth
  server; ~2.5 MB): ``mcp.server``'s ``__init__`` and ``mcp.shared.memory`` import
  ``FastMCP`` from it; the gateway and the SDKs use the low-level ``Server``;
- ``uvicorn.main`` (uvicorn's command line, with click and configparser: ~40 modules):
  ``uvicorn``'s ``__init__`` imports ``Server``, ``main`` and ``run`` from it, and
  ``sse_starlette`` patches ``uvicorn.main.Server`` (``uvicorn.server``'s class, bound
  at once); the gateway and the scripted model run a ``Server`` in a loop of their own
  and never call uvicorn's command line;
- ``uvicorn.supervisors`` (with ``multiprocessing`` and pickle: ~15 modules):
  ``uvicorn.main`` imports its reloader and worker pool, used only by ``uvicorn.run``
  with ``reload`` or ``workers``;
- ``mcp.client.session_group`` (with mcp's SSE and streamable-HTTP clients and
  httpx_sse, whose annotations would run httpx): ``mcp``'s ``__init__`` imports
  ``ClientSessionGroup`` from it, for apps that connect to several MCP servers;
- ``cryptography.hazmat.primitives.ciphers`` (cryptography's Rust and OpenSSL bindings:
  ~8 MB RSS, most of it the shared libraries' pages): keyring's Secret Service backend
  (``secretstorage``) imports ``Cipher``, ``algorithms`` and ``modes`` from it whenever a
  session bus is named, and uses them only to encrypt or decrypt a secret that passes
  through an encrypted Secret Service session; finding the backend, and asking whether
  the service runs, never does. A person whose keyring holds a secret the app reads
  loads them then;
- ``importlib.metadata`` (with ``email``, ``csv`` and their parts: ~30 modules, ~2.5 MB):
  pydantic imports ``entry_points`` from it to look for plugins, which the app turns off
  (`memory.PYDANTIC_PLUGINS_OFF`), and ``version`` for a check of ``email-validator``
  that only an email field runs; the SDKs and mcp ask a package's version only on paths
  an idle app never takes (the About box, the gateway's first agent, a CLI newer than
  the bundled one)."""


class DeferredName:
    """Stands in for a name a `DeferredModule` exports, running the module at first use.

    ``from package.module import Name`` binds this without running the module. Calling
    it, reading or setting an attribute, ``isinstance``/``issubclass`` against it,
    subclassing it or ``|`` with it runs the module (once) and acts on the real object.
    """

    __slots__ = ("_module", "_name")

    def __init__(self, module: types.ModuleType, name: str) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_name", name)

    def resolve(self) -> Any:
        """The real object (runs the module if it has not run)."""
        run_deferred(self._module)
        value = self._module.__dict__.get(self._name, self)
        if value is self and self._module.__spec__ is not None \
                and self._module.__spec__.submodule_search_locations is not None:
            # ``from package import submodule`` imports it, as the import system would have
            importlib.import_module(f"{self._module.__name__}.{self._name}")
            value = self._module.__dict__.get(self._name, self)
        if value is self:
            raise ImportError(f"cannot import name {self._name!r} from "
                              f"{self._module.__name__!r}")
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.resolve(), attribute)

    def __setattr__(self, attribute: str, value: object) -> None:
        setattr(self.resolve(), attribute, value)  # (a library patching the class)

    def __delattr__(self, attribute: str) -> None:
        delattr(self.resolve(), attribute)

    def __instancecheck__(self, instance: object) -> bool:
        return isinstance(instance, self.resolve())

    def __subclasscheck__(self, subclass: type) -> bool:
        return issubclass(subclass, self.resolve())

    def __mro_entries__(self, bases: tuple[object, ...]) -> tuple[Any, ...]:
        return (self.resolve(),)

    def __or__(self, other: object) -> Any:
        return self.resolve() | other

    def __ror__(self, other: object) -> Any:
        return other | self.resolve()

    def __repr__(self) -> str:
        return f"<deferred {self._module.__name__}.{self._name}>"


class _DeferringLoader:
    """Loads a submodule as a `DeferredModule` holding `DeferredName`s for `exported`."""

    def __init__(self, spec: importlib.machinery.ModuleSpec, exported: tuple[str, ...]) -> None:
        self._spec, self._exported = spec, exported

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.util.module_from_spec(self._spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__, module.__loader__ = self._spec, self._spec.loader  # the real ones
        module.__class__ = DeferredModule
        for name in self._exported:
            name, _, source = name.partition("=")
            module.__dict__[name] = (getattr(importlib.import_module(source), name) if source
                                     else DeferredName(module, name))


class _DeferringFinder:
    """Finds the submodules registered by `defer_submodule` (first on ``sys.meta_path``)."""

    def __init__(self) -> None:
        self.submodules: dict[str, tuple[str, ...]] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        exported = self.submodules.pop(fullname, None)
        if exported is None or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None  # not there: its import fails exactly as before
        loader = _DeferringLoader(spec, exported)  # (a loader by its methods, as the
        ours = importlib.machinery.ModuleSpec(  # import system needs: no importlib.abc)
            fullname, loader, origin=spec.origin)  # type: ignore[arg-type]
        ours.submodule_search_locations = spec.submodule_search_locations
        ours.has_location = spec.has_location
        return ours


_finder = _DeferringFinder()


def defer_submodule(name: str, exported: tuple[str, ...]) -> bool:
    """Import the submodule `name`, when its package first imports it, as a
    `DeferredModule` whose names `exported` are `DeferredName`s until it runs.

    An exported ``"Name=other.module"`` is a name the submodule only imports from
    ``other.module``: it is bound to that module's object at once (that module runs
    then), so reading or patching it does not run the submodule.

    Returns False (nothing done) when it is imported already. Its other names, and
    anything else read from it, run it as any `DeferredModule`.
    """
    if name in sys.modules or "." not in name:
        return False
    with _lock:
        _finder.submodules[name] = exported
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
    return True
