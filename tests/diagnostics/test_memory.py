"""What the app leaves out of memory (an idle app stays small): library parts it never
uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, sys
from qoder_desktop.ui.lean_imports import apply_lean_imports
apply_lean_imports()  # as the entry point does before the GUI's imports
import http.server, threading, httpx
server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=server.serve_forever, daemon=True).start()
status = httpx.get(f"http://127.0.0.1:{server.server_port}/").status_code
server.shutdown()
print(json.dumps({"status": status, "loaded": sorted(
    name for name in ("rich", "pygments", "httpx._main") if sys.modules.get(name))}))
"""


def test_httpx_works_without_loading_its_command_line_client(tmp_path: object) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"status": 200, "loaded": []}


def test_collection_paused_for_start_up_comes_back_on() -> None:
    import gc

    from qoder_desktop.diagnostics.memory import pause_collection, resume_collection

    assert gc.isenabled()
    try:
        assert pause_collection() is True
        assert not gc.isenabled()
        assert pause_collection() is False  # already off: a second pause changes nothing
        resume_collection()
        assert gc.isenabled()
        gc.disable()  # turned off by someone else: not ours to turn back on
        assert pause_collection() is False
        resume_collection()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_held_collection_comes_back_on_with_the_last_release() -> None:
    import gc

    from qoder_desktop.diagnostics.memory import hold_collection

    assert gc.isenabled()
    try:
        first = hold_collection()
        second = hold_collection()
        assert not gc.isenabled()
        first()
        first()  # (a release twice counts once)
        assert not gc.isenabled()
        second()
        assert gc.isenabled()
        gc.disable()  # turned off by someone else: not ours to turn back on
        hold_collection()()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_importing_the_app_leaves_garbage_collection_on(tmp_path: object) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", "import gc, qoder_desktop.ui.app, "
                           "qoder_desktop.ui.wiring; print(gc.isenabled())"], env=env,
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "True"


KEYRING_PROBE = """
import json, sys
from qoder_desktop.ui.lean_imports import apply_lean_imports
apply_lean_imports()  # as the entry point does before the GUI's imports
from qoder_desktop.config.secrets import SecretStore
status = SecretStore().check_backend()
print(json.dumps({"usable": status.usable, "message": status.message,
                  "secretstorage": sys.modules.get("secretstorage") is not None,
                  "more_itertools run": type(sys.modules["more_itertools"]).__name__
                  == "module"}))
"""


def _keyring_probe(tmp_path: Path, bus: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / ".config"),
               XDG_DATA_HOME=str(tmp_path / ".local/share"))
    if bus is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
    done = subprocess.run([sys.executable, "-c", KEYRING_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_secret_service_client_loads_only_where_a_session_bus_is_named(tmp_path: Path) -> None:
    # No session bus named: the Secret Service cannot be reached, its client stays unloaded,
    # and the person is told the same as when the client is loaded and finds no service.
    without = _keyring_probe(tmp_path, None)
    named = _keyring_probe(tmp_path, f"unix:path={tmp_path / 'no-bus'}")
    assert without["secretstorage"] is False
    assert named["secretstorage"] is True
    # keyring's helpers import more_itertools; finding the backend never runs it
    assert without["more_itertools run"] is False and named["more_itertools run"] is False
    assert without["usable"] is False and named["usable"] is False
    assert without["message"] == named["message"]
    assert "No OS keyring was found" in str(without["message"])


def test_settling_drops_sources_read_from_files_and_tracebacks_still_show_them() -> None:
    import linecache
    import traceback

    from qoder_desktop.diagnostics.memory import settle_memory

    here = __file__
    generated = "<generated by a library: no file>"
    linecache.cache[generated] = (5, None, ["x = 1\n"], generated)
    try:
        assert linecache.getline(here, 1)  # read and kept
        assert here in linecache.cache
        settle_memory(collect=False)
        assert here not in linecache.cache
        assert linecache.cache[generated][2] == ["x = 1\n"]  # nothing could read it again
        try:
            raise RuntimeError("shown with its line")
        except RuntimeError as exc:
            text = "".join(traceback.format_exception(exc))
        assert 'raise RuntimeError("shown with its line")' in text
    finally:
        linecache.cache.pop(generated, None)


ARENA_SCRIPT = r"""
import ctypes, sys, threading
from qoder_desktop.diagnostics.memory import limit_malloc_arenas
limited = limit_malloc_arenas() if sys.argv[1] == "limit" else False
kept = []
together = threading.Barrier(8)
def allocate():
    kept.append([bytes(2000) for _ in range(200)])  # malloc, not Python's small-object pool
    together.wait()  # all alive at once, as the app's threads are
threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(limited, flush=True)
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" block per arena, on stderr
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_threads_share_two_malloc_arenas_once_limited() -> None:
    """Eight live threads that allocate made eight arenas of their own beside the main
    one; with the app's limit they share two."""
    env = {key: value for key, value in os.environ.items() if key != "MALLOC_ARENA_MAX"}

    def arenas(mode: str) -> tuple[str, int]:
        done = subprocess.run([sys.executable, "-c", ARENA_SCRIPT, mode], env=env,
                              capture_output=True, text=True, timeout=60, check=True)
        return done.stdout.strip(), done.stderr.count("Arena ")

    assert arenas("plain") == ("False", 9)
    assert arenas("limit") == ("True", 2)


METADATA_PROBE = """
import json, os, sys
from qoder_desktop.ui.lean_imports import apply_lean_imports
apply_lean_imports()  # as the entry point does before the GUI's imports
from pydantic import AnyUrl, BaseModel
class Settings(BaseModel):
    name: str
    url: AnyUrl
checked = Settings(name="x", url="http://127.0.0.1:1/").name
idle = {"email": "email" in sys.modules,
        "metadata run": type(sys.modules.get("importlib.metadata")).__name__ == "module"}
import importlib.metadata
from importlib.metadata import entry_points, version
print(json.dumps({"checked": checked, "idle": idle,
                  "plugins": os.environ.get("PYDANTIC_DISABLE_PLUGINS"),
                  "version": version("pydantic") == __import__("pydantic").VERSION,
                  "scripts": any(ep.name == "qoder-desktop"
                                 for ep in entry_points(group="console_scripts"))}))
"""


def test_pydantic_models_load_no_package_metadata_until_a_version_is_asked(
        tmp_path: Path) -> None:
    """Pydantic's plugin search (``importlib.metadata`` with ``email``: ~2.5 MB) does not
    run; asking a package's version or entry points still answers."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", METADATA_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"checked": "x", "idle": {"email": False, "metadata run": False},
                      "plugins": "__all__", "version": True, "scripts": True}
