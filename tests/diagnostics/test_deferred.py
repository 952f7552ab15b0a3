"""Modules the libraries import but an idle app never uses run on first use (issue #15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import qoder_desktop.ui  # noqa: F401  (as in the app: PySide6's import check reads the file)
from qoder_desktop.diagnostics.deferred import DeferredModule, defer

APP_PROBE = """
import json, sys
import qoder_desktop.ui  # the app's GUI process imports this first
import claude_agent_sdk, qoder_desktop.gateway.server, qoder_desktop.agents.claude
idle = sorted(name for name in sys.modules
              if name.split(".")[0] in ("jsonschema", "referencing", "rpds")
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

print(json.dumps({"idle": idle, "calls": anyio.run(call)}))
"""


def test_the_idle_app_leaves_jsonschema_unrun_and_tools_still_validate(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", APP_PROBE], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["idle"] == []  # imported by the SDK and by mcp, not run
    good_error, good_text, bad_error, bad_text = report["calls"]
    assert (good_error, good_text) == (False, "5")
    assert bad_error is True and "Input validation error" in bad_text  # loaded on first use


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
