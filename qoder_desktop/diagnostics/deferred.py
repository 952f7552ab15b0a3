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
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types

DEFERRED_MODULES: tuple[str, ...] = ("jsonschema", "more_itertools")
"""Modules the libraries import with a plain ``import name`` but use only on a path an
idle app never takes:

- ``jsonschema``: see the module docstring;
- ``more_itertools`` (~0.4 MB): imported by keyring's helper ``jaraco.functools`` for
  functions keyring does not call."""

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
        with _lock:
            if isinstance(self, DeferredModule) and name not in _running:
                _running.add(name)
                try:
                    spec = self.__spec__
                    assert spec is not None and spec.loader is not None  # set by defer()
                    spec.loader.exec_module(self)
                    self.__class__ = types.ModuleType  # type: ignore[assignment]
                finally:
                    _running.discard(name)
        try:
            return types.ModuleType.__getattribute__(self, attribute)
        except AttributeError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None


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
    """Defer each of `DEFERRED_MODULES` (call before the libraries are imported)."""
    for name in DEFERRED_MODULES:
        defer(name)
