"""Modules the libraries import but an idle app never uses run on first use; the app's
entry point applies that (and the other import savings) explicitly, importing the views
alone changes no other library."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_home import app_home
from helpers.desktop import stop_group, wait_for
from helpers.gateway_client import mcp_client

from qoder_desktop.diagnostics.deferred import DeferredModule, DeferredName, defer, defer_submodule
from qoder_desktop.gateway.contract import gateway_url
from qoder_desktop.ui.lean_imports import apply_lean_imports

apply_lean_imports()  # as in the app: PySide6's import check reads each file once

APP_PROBE = """
import json, sys
from qoder_desktop.ui.lean_imports import apply_lean_imports
apply_lean_imports()  # as the entry point does before the GUI's imports
import claude_agent_sdk, qoder_desktop.gateway.server, qoder_desktop.agents.claude
idle = sorted(name for name in sys.modules
              if (name.split(".")[0] in ("jsonschema", "referencing", "rpds", "pydantic_settings",
                                         "httpx", "httpx_sse", "click")
                  or name.startswith(("mcp.server.fastmcp", "uvicorn.supervisors",
                                      "multiprocessing", "mcp.client.session_group", "uvicorn.main",
                                      "mcp.client.sse", "mcp.client.streamable_http")))
              and type(sys.modules[name]).__name__ == "module")

import anyio
from claude_agent_sdk import create_sdk_mcp_server, tool
from mcp.shared.memory import create_connected_server_and_client_session

@tool("add", "Add two numbers", {"a": int, "b": int})
async def add(args):
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

async def call():
    server = create_sdk_mcp_server("calc", tools=[add])["instance"]
    async with create_connected_server_and_client_session(server) as client:
        good = await client.call_tool("add", {"a": 2, "b": 3})
        bad = await client.call_tool("add", {"a": "two", "b": 3})
    return [good.isError, good.content[0].text, bad.isError, bad.content[0].text]

calls = anyio.run(call)  # create_connected_server_and_client_session: isinstance(_, FastMCP)
import mcp.server
from mcp.server.fastmcp import Context, FastMCP
fast = mcp.server.FastMCP("fast")  # the name mcp.server bound while it was deferred
@fast.tool()
def echo(text: str) -> str:
    return text
fastmcp = [type(fast) is FastMCP, isinstance(fast, mcp.server.FastMCP), Context.__name__,
           [tool.name for tool in anyio.run(fast.list_tools)]]
import uvicorn.server
server_class = [uvicorn.Server is uvicorn.server.Server,  # bound at once, main unrun
                uvicorn.server.Server.handle_exit.__qualname__]  # as sse_starlette patched it
from uvicorn.supervisors.multiprocess import Multiprocess
main = sys.modules["uvicorn.main"]  # (the package's name "main" is its click command)
supervisors = [main.Multiprocess.__name__, issubclass(Multiprocess, main.Multiprocess),
               main.ChangeReload.__name__, main.Server is uvicorn.server.Server,
               callable(uvicorn.main), uvicorn.run.resolve() is main.run]
import mcp, mcp.shared.session
group = mcp.ClientSessionGroup()  # the name mcp bound while mcp.client.session_group was deferred
from mcp.client.session_group import ClientSessionGroup, StreamableHttpParameters
from mcp.client.streamable_http import streamablehttp_client
with mcp.shared.session.httpx.Client(base_url="http://127.0.0.1:9") as client:
    http = [type(group) is ClientSessionGroup, group.sessions, StreamableHttpParameters.__name__,
            callable(streamablehttp_client), mcp.shared.session.httpx.codes.REQUEST_TIMEOUT == 408,
            str(client.base_url)]
print(json.dumps({"idle": idle, "calls": calls, "fastmcp": fastmcp, "supervisors": supervisors,
                  "server": server_class,
                  "http": http}))
"""


def test_the_idle_app_leaves_jsonschema_fastmcp_uvicorn_cli_httpx_unrun_and_they_work(
        tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", APP_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["idle"] == []  # imported by the SDK and by mcp, not run
    good_error, good_text, bad_error, bad_text = report["calls"]
    assert (good_error, good_text) == (False, "5")
    assert bad_error is True and "Input validation error" in bad_text  # loaded on first use
    assert report["fastmcp"] == [True, True, "Context", ["echo"]]
    assert report["server"] == [True, "AppStatus.handle_exit"]
    assert report["supervisors"] == ["Multiprocess", True, "StatReload",  # uvicorn.run's
                                     True, True, True]  # its command line on first use
    assert report["http"] == [True, [], "StreamableHttpParameters", True, True,
                              "http://127.0.0.1:9"]  # mcp's HTTP client and httpx on first use


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """A package `deferred_probe` on sys.path whose code counts its runs."""
    root = tmp_path / "deferred_probe"
    root.mkdir()
    (root / "__init__.py").write_text(textwrap.dedent("""
        import builtins
        builtins.deferred_probe_runs = getattr(builtins, "deferred_probe_runs", 0) + 1
        def double(x):
            return 2 * x
        from deferred_probe.part import VALUE
    """))
    # a submodule that imports from its package while the package's code runs
    (root / "part.py").write_text("from deferred_probe import double\nVALUE = double(21)\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield root
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.split(".")[0] == "deferred_probe"]:
            del sys.modules[name]
        import builtins
        if hasattr(builtins, "deferred_probe_runs"):
            del builtins.deferred_probe_runs


@pytest.fixture
def exporting(package: Path) -> Path:
    """`deferred_probe` whose package imports a class from a submodule `lib` that counts runs."""
    (package / "__init__.py").write_text("from deferred_probe.lib import Thing\n")
    (package / "lib.py").write_text(textwrap.dedent("""
        import builtins
        builtins.deferred_probe_runs = getattr(builtins, "deferred_probe_runs", 0) + 1
        class Thing:
            def __init__(self, size):
                self.size = size
            kind = "thing"
        OTHER = 7
    """))
    return package


def test_a_deferred_submodule_binds_its_names_and_runs_once_at_first_use(
        exporting: Path) -> None:
    assert defer_submodule("deferred_probe.lib", ("Thing",)) is True
    import deferred_probe
    assert _runs() == 0 and isinstance(deferred_probe.Thing, DeferredName)
    assert isinstance(sys.modules["deferred_probe.lib"], DeferredModule)
    thing = deferred_probe.Thing(3)  # calling it runs the module
    assert _runs() == 1 and thing.size == 3
    from deferred_probe.lib import OTHER, Thing
    assert OTHER == 7 and isinstance(thing, Thing) and isinstance(thing, deferred_probe.Thing)
    assert deferred_probe.Thing.kind == "thing"
    deferred_probe.Thing.kind = "patched"  # a library patching the class patches the real one
    assert Thing.kind == "patched"

    class Bigger(deferred_probe.Thing):  # type: ignore[misc,name-defined]
        pass
    assert issubclass(Bigger, Thing) and issubclass(Bigger, deferred_probe.Thing)
    assert _runs() == 1


def test_any_other_name_of_a_deferred_submodule_runs_it(exporting: Path) -> None:
    defer_submodule("deferred_probe.lib", ("Thing",))
    import deferred_probe.lib
    assert _runs() == 0
    assert deferred_probe.lib.OTHER == 7 and _runs() == 1
    assert deferred_probe.Thing(1).size == 1 and _runs() == 1


def test_a_deferred_submodule_that_fails_fails_at_first_use(exporting: Path) -> None:
    (exporting / "lib.py").write_text("raise ImportError('needs a library not here')\n")
    defer_submodule("deferred_probe.lib", ("Thing",))
    import deferred_probe
    with pytest.raises(ImportError, match="needs a library not here"):
        deferred_probe.Thing(1)


def test_defer_submodule_leaves_top_level_and_imported_modules_alone(exporting: Path) -> None:
    assert defer_submodule("deferred_probe", ("Thing",)) is False
    import deferred_probe
    assert type(deferred_probe.Thing) is type
    assert defer_submodule("deferred_probe.lib", ("Thing",)) is False  # imported already


def _runs() -> int:
    import builtins
    return int(getattr(builtins, "deferred_probe_runs", 0))


def test_import_binds_without_running_and_first_use_runs_it_once(package: Path) -> None:
    assert defer("deferred_probe") is True
    import deferred_probe  # noqa: F401  (the first importer)
    import deferred_probe as again  # a second importer reads __spec__: still not run
    assert _runs() == 0
    assert isinstance(again, DeferredModule)
    assert again.double(4) == 8
    from deferred_probe import VALUE
    assert VALUE == 42 and _runs() == 1
    assert type(sys.modules["deferred_probe"]) is type(sys)  # a plain module from now on
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = again.nothing


def test_defer_leaves_imported_missing_and_dotted_modules_alone(package: Path) -> None:
    assert defer("deferred_probe.part") is False
    assert defer("no_such_module_anywhere") is False
    assert "no_such_module_anywhere" not in sys.modules
    import deferred_probe
    assert deferred_probe.VALUE == 42
    assert defer("deferred_probe") is False  # imported already


def test_a_failing_module_fails_at_first_use_as_its_import_would(package: Path) -> None:
    (package / "__init__.py").write_text("raise ImportError('needs a library not here')\n")
    defer("deferred_probe")
    import deferred_probe
    with pytest.raises(ImportError, match="needs a library not here"):
        _ = deferred_probe.double


def test_threads_racing_to_first_use_run_the_module_once(package: Path) -> None:
    defer("deferred_probe")
    import deferred_probe
    results: list[int] = []
    start = threading.Barrier(8)

    def use() -> None:
        start.wait()
        results.append(deferred_probe.double(1))

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == [2] * 8
    assert _runs() == 1


BARE_IMPORT_PROBE = """
import json, sys
finders = list(sys.meta_path)
import qoder_desktop.ui, qoder_desktop.ui.app  # the views alone, without the entry point
from qoder_desktop.diagnostics.deferred import DeferredModule

def changes():
    feature = sys.modules["shibokensupport.feature"]
    return {"deferred": sorted(name for name, module in sys.modules.items()
                               if isinstance(module, DeferredModule)),
            "skipped": "httpx._main" in sys.modules,
            "finders added": [type(f).__name__ for f in sys.meta_path if f not in finders],
            "pyside check replaced": getattr(feature._mod_uses_pyside, "_qoder_reads_once",
                                             False)}

before = changes()
from qoder_desktop.ui.lean_imports import apply_lean_imports
apply_lean_imports()
print(json.dumps({"imported": before, "applied": changes()}))
"""


def test_importing_the_views_alone_changes_no_other_library(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run([sys.executable, "-c", BARE_IMPORT_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["imported"] == {"deferred": [], "skipped": False, "finders added": [],
                                  "pyside check replaced": False}
    applied = report["applied"]  # what the entry point's explicit call changes
    assert {"jsonschema", "more_itertools", "httpx"} <= set(applied["deferred"])
    assert applied["skipped"] is True and applied["finders added"] == ["_DeferringFinder"]
    assert applied["pyside check replaced"] is True


ENTRY_PROBE = """
import atexit, json, logging, runpy, sys
report_file, sys.argv = sys.argv[1], ["qoder-desktop"]
NOT_AT_START = ("qoder_desktop.away", "cryptography", "segno", "websockets",
                # the history window, its model and queries: when a person opens it
                "qoder_desktop.ui.control.history_model", "qoder_desktop.ui.windows.history_",
                "qoder_desktop.store.history", "qoder_desktop.store.ledger_export",
                "qoder_desktop.domain.history",
                # Settings with its pages, "Connect an Agent": when opened
                "qoder_desktop.ui.windows.settings_dialog", "qoder_desktop.ui.forms.ui_settings",
                "qoder_desktop.ui.windows.remote_host", "qoder_desktop.ui.windows.connect_dialog",
                # the app's and the tray's icons are shipped PNGs: no SVG renderer
                "PySide6.QtSvg")
HTTP_STACK = ("uvicorn", "starlette", "h11", "sse_starlette", "python_multipart", "multipart",
              "mcp.server.streamable_http", "mcp.server.transport_security",
              "qoder_desktop.gateway.http_stack", "qoder_desktop.gateway.guarded_http")
loaded = {}

def http_stack():
    return sorted(name for name in list(sys.modules) if name.startswith(HTTP_STACK))

class Moments(logging.Handler):  # what was loaded when the gateway said what it does
    def emit(self, record):
        message = record.getMessage()
        if message.startswith("approval gateway listening"):
            loaded["listening"] = http_stack()
        elif message.startswith("the approval gateway: an agent connected"):
            loaded["first connection"] = http_stack()

logging.getLogger().addHandler(Moments())

def report():  # what the app's imports were like when it quit
    feature = sys.modules.get("shibokensupport.feature")
    with open(report_file, "w", encoding="utf-8") as out:
        json.dump({"first": [name for name in sys.modules  # in the order imports began
                             if name in ("qoder_desktop.domain.kinds", "shiboken6",
                                         "asyncio")],
                   "not at start": sorted(name for name in sys.modules
                                          if name.startswith(NOT_AT_START)),
                   "http stack": {**loaded, "at quit": len(http_stack())},
                   "jsonschema": type(sys.modules.get("jsonschema")).__name__,
                   "httpx._main skipped": sys.modules.get("httpx._main", 0) is None,
                   "pyside check replaced": getattr(getattr(feature, "_mod_uses_pyside", None),
                                                    "_qoder_reads_once", False)}, out)

atexit.register(report)
runpy.run_module("qoder_desktop", run_name="__main__", alter_sys=True)  # python -m qoder_desktop
"""
ENTRY_TOKEN = "entry-point-gateway-token-0123456789abcdef"


async def _tools_of_gateway(port: int) -> list[str]:
    async with mcp_client(gateway_url(port), ENTRY_TOKEN, name="entry-probe") as session:
        return [tool.name for tool in (await session.list_tools()).tools]


def test_the_entry_point_makes_the_imports_lean_before_the_gui_loads(tmp_path: Path) -> None:
    home = tmp_path / "app-home"
    port = app_home(home)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QODER_DESKTOP_HOME=str(home),
               HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
               QODER_DESKTOP_GATEWAY_TOKEN=ENTRY_TOKEN)
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    log_file, report_file = home / "state" / "qoder-desktop.log", tmp_path / "report.json"
    app = subprocess.Popen([sys.executable, "-c", ENTRY_PROBE, str(report_file)], env=env,
                           cwd=str(tmp_path), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:  # the gateway is among the last to start
        wait_for(lambda: log_file.exists() and "approval gateway listening" in log_file.read_text(),
                 90, "the app's start-up to reach the gateway")
        # the first agent that connects is served (its HTTP stack loads then)
        tools = asyncio.run(_tools_of_gateway(port))
    finally:
        stop_group(app, timeout=30)
    assert tools == ["approve"]
    assert app.returncode == 0  # quit cleanly on SIGTERM, its gateway serving
    assert [line for line in log_file.read_text().splitlines() if " ERROR " in line] == []
    report = json.loads(report_file.read_text(encoding="utf-8"))
    # the gateway listens without its HTTP stack (uvicorn, Starlette, h11, multipart, the
    # SDK's HTTP transport); it loaded when the agent connected, not before
    assert report["http stack"]["listening"] == []
    assert report["http stack"]["first connection"] == []
    assert report["http stack"]["at quit"] > 40
    assert report["jsonschema"] in ("DeferredModule", "NoneType")  # not run, if imported
    # Away mode (the phone page, its ciphers, QR codes and WebSocket) loads only when turned
    # on, the gateway's server asks uvicorn for no WebSocket library, the windows a
    # person opens from the menus load when first opened, and the application's and the
    # tray's icons (built at start) come from PNGs without QtSvg
    assert report["not at start"] == []
    assert report["httpx._main skipped"] is True and report["pyside check replaced"] is True
    # the Qt-free modules the window needs came before PySide6 (`pyside_scan.prepare_imports`),
    # asyncio after both (it loads after the window's first frame)
    assert report["first"] == ["qoder_desktop.domain.kinds", "shiboken6", "asyncio"]


KEYRING_PROBE = """
import json, os, sys
from qoder_desktop.ui.lean_imports import apply_lean_imports
apply_lean_imports()  # as the entry point does
import keyring
keyring.get_keyring()  # finding the backend imports secretstorage (a session bus is named)
found = type(sys.modules.get("secretstorage")).__name__
rust = "cryptography.hazmat.bindings._rust" in sys.modules
from secretstorage import item, util  # what encrypts and decrypts a secret on the bus
key, iv = os.urandom(16), os.urandom(16)
encryptor = util.Cipher(util.algorithms.AES(key), util.modes.CBC(iv),
                        util.default_backend()).encryptor()
sealed = encryptor.update(b"a secret value!!") + encryptor.finalize()
decryptor = item.Cipher(item.algorithms.AES(key), item.modes.CBC(iv),
                        item.default_backend()).decryptor()
opened = (decryptor.update(sealed) + decryptor.finalize()).decode()
print(json.dumps({"secretstorage": found, "rust before use": rust, "opened": opened,
                  "rust after use": "cryptography.hazmat.bindings._rust" in sys.modules}))
"""


def test_finding_the_keyring_leaves_cryptography_unloaded_until_a_secret_is_sealed(
        tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               DBUS_SESSION_BUS_ADDRESS=f"unix:path={tmp_path / 'no-bus'}")
    env.pop("PYTHON_KEYRING_BACKEND", None)
    done = subprocess.run([sys.executable, "-c", KEYRING_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["secretstorage"] == "module"  # imported and run while keyring looked
    assert report["rust before use"] is False
    assert report["opened"] == "a secret value!!"  # the cipher works at first use
    assert report["rust after use"] is True


def test_a_deferred_name_for_a_submodule_imports_it_at_first_use(package: Path) -> None:
    assert defer_submodule("deferred_probe.sub", ("extra_word", "extra")) is True
    sub = package / "sub"
    sub.mkdir()
    (sub / "__init__.py").write_text("extra_word = 'from the package'\n")
    (sub / "extra.py").write_text("WORD = 'from the submodule'\n")
    from deferred_probe.sub import extra, extra_word  # the package's own name, a submodule
    assert isinstance(extra, DeferredName) and _runs() == 1  # (the top package ran)
    assert extra.WORD == "from the submodule"
    assert extra_word.upper() == "FROM THE PACKAGE"


def test_a_name_a_deferred_submodule_only_reexports_is_bound_at_once(exporting: Path) -> None:
    (exporting / "origin.py").write_text("class Base:\n    def hello(self):\n        return 'hi'\n")
    (exporting / "__init__.py").write_text("from deferred_probe.lib import Base, Thing\n")
    (exporting / "lib.py").write_text(
        (exporting / "lib.py").read_text() + "from deferred_probe.origin import Base\n")
    assert defer_submodule("deferred_probe.lib", ("Base=deferred_probe.origin", "Thing"))
    import deferred_probe
    from deferred_probe.origin import Base
    assert deferred_probe.Base is Base and _runs() == 0  # the real class; lib has not run
    deferred_probe.Base.hello = lambda self: "patched"  # a library patching it
    assert _runs() == 0 and Base().hello() == "patched"
    assert deferred_probe.Thing(2).size == 2 and _runs() == 1
    assert sys.modules["deferred_probe.lib"].Base is Base
