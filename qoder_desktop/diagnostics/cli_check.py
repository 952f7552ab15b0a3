"""The agent CLIs in the self-check: found where their SDKs look, run with ``--version``
offline and with throw-away config folders (never the user's ``~/.claude`` or ``~/.qoder``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoder_desktop.diagnostics.report import CheckResult, Status
from qoder_desktop.scripted_model.cli_env import DEAD_PROXY

CLI_TIMEOUT = 20.0
"""Seconds a CLI gets to answer ``--version``."""

_OFFLINE_ENV = {
    "DISABLE_AUTOUPDATER": "1", "DISABLE_UPDATES": "1", "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "HTTP_PROXY": DEAD_PROXY, "HTTPS_PROXY": DEAD_PROXY, "ALL_PROXY": DEAD_PROXY,
    "http_proxy": DEAD_PROXY, "https_proxy": DEAD_PROXY, "all_proxy": DEAD_PROXY,
    "NO_PROXY": "", "no_proxy": "",
}
"""No updates, telemetry or other traffic while a CLI prints its version."""


@dataclass(frozen=True)
class CliSpec:
    """An agent CLI shipped inside an SDK wheel, and how that SDK finds it.

    Attributes:
        label: the name in the report, e.g. ``"claude CLI"``.
        package: the SDK's import name; its ``_bundled/`` folder holds the CLI.
        distribution: the SDK's name on PyPI.
        commands: executable names the SDK tries, in order.
        override_env: an environment variable the SDK reads first, if any.
    """

    label: str
    package: str
    distribution: str
    commands: tuple[str, ...]
    override_env: str | None = None


CLAUDE_CLI = CliSpec("claude CLI", "claude_agent_sdk", "claude-agent-sdk", ("claude",))
QODER_CLI = CliSpec("qoder CLI", "qoder_agent_sdk", "qoder-agent-sdk", ("qodercli", "qoder"),
                    override_env="QODERCLI_PATH")
CLIS: tuple[CliSpec, ...] = (CLAUDE_CLI, QODER_CLI)


@dataclass(frozen=True)
class CliLocation:
    """Where a CLI was found.

    Attributes:
        path: the executable (None when none was found).
        source: ``"bundled"``, ``"PATH"`` or the override variable's name.
        sdk_version: the SDK's version, None when the SDK is not importable.
        expected_version: the CLI version the SDK ships, when it says so.
    """

    path: Path | None
    source: str = "bundled"
    sdk_version: str | None = None
    expected_version: str | None = None


def bundle_root() -> Path | None:
    """The PyInstaller bundle's data folder when running frozen."""
    root = getattr(sys, "_MEIPASS", None)
    return Path(root) if getattr(sys, "frozen", False) and root else None


def _exe_names(spec: CliSpec) -> list[str]:
    suffix = ".exe" if sys.platform.startswith("win") else ""
    return [f"{command}{suffix}" for command in spec.commands]


def locate_cli(spec: CliSpec, environ: Mapping[str, str] | None = None) -> CliLocation | str:
    """Find a CLI the way its SDK does: override variable, ``_bundled/``, then ``PATH``.

    In a PyInstaller bundle the spec puts ``_bundled/`` under ``sys._MEIPASS`` at the
    same place relative to the SDK package, so the SDK's own lookup finds it too.

    Returns:
        The location, or a sentence saying the SDK itself cannot be imported.
    """
    env = os.environ if environ is None else environ
    try:
        module: Any = importlib.import_module(spec.package)
    except Exception as exc:
        return f"{spec.distribution} cannot be imported ({type(exc).__name__}: {exc})"
    sdk_version = str(getattr(module, "__version__", "?"))
    try:
        expected = str(importlib.import_module(f"{spec.package}._cli_version").__cli_version__)
    except Exception:
        expected = None
    found = CliLocation(None, "bundled", sdk_version, expected)
    if spec.override_env and env.get(spec.override_env):
        return CliLocation(Path(env[spec.override_env]), spec.override_env, sdk_version, expected)
    folders = [Path(module.__file__).parent / "_bundled"]
    bundle = bundle_root()
    if bundle is not None:
        folders.append(bundle / spec.package / "_bundled")
    for folder in folders:
        for name in _exe_names(spec):
            if (folder / name).is_file():
                return CliLocation(folder / name, "bundled", sdk_version, expected)
    for name in spec.commands:
        on_path = shutil.which(name, path=env.get("PATH"))
        if on_path:
            return CliLocation(Path(on_path), "PATH", sdk_version, expected)
    return found


def cli_env(environ: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """The environment for ``CLI --version``: offline, with throw-away home/config folders.

    Neither ``~/.claude`` nor ``~/.qoder`` is touched: HOME, the XDG folders,
    ``CLAUDE_CONFIG_DIR`` and ``QODER_CONFIG_DIR`` all point into `scratch`.
    """
    env = dict(environ)
    env.update(_OFFLINE_ENV)
    for var, sub in (("HOME", "home"), ("USERPROFILE", "home"), ("XDG_CONFIG_HOME", "config"),
                     ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
                     ("XDG_CACHE_HOME", "cache"), ("CLAUDE_CONFIG_DIR", "claude"),
                     ("QODER_CONFIG_DIR", "qoder")):
        folder = scratch / sub
        folder.mkdir(parents=True, exist_ok=True)
        env[var] = str(folder)
    return env


def run_version(path: Path, env: Mapping[str, str], cwd: Path,
                timeout: float = CLI_TIMEOUT) -> tuple[bool, str]:
    """Run ``path --version``; ``(True, first line)`` or ``(False, what went wrong)``."""
    try:
        proc = subprocess.Popen([str(path), "--version"], env=dict(env), cwd=cwd,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=os.name == "posix")
    except OSError as exc:
        return False, f"cannot be started ({exc.strerror or exc})"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.communicate()
        return False, f"did not answer `--version` within {timeout:g} s"
    first = next((line.strip() for line in (out or err).splitlines() if line.strip()), "")
    if proc.returncode != 0:
        return False, f"`--version` exited with code {proc.returncode}: {first or 'no output'}"
    if not first:
        return False, "`--version` printed nothing"
    return True, first


def check_cli(spec: CliSpec, location: CliLocation | str, *,
              environ: Mapping[str, str] | None = None,
              timeout: float = CLI_TIMEOUT) -> CheckResult:
    """Check that a CLI is there, can be run, and say its version and its SDK's."""
    frozen = bundle_root() is not None
    reinstall = ("the bundle is incomplete: reinstall Qoder Desktop or rebuild it "
                 "(bash packaging/build.sh)" if frozen else
                 f"reinstall the SDK: pip install --force-reinstall {spec.distribution}")
    if isinstance(location, str):
        return CheckResult(spec.label, Status.FAIL, location, reinstall)
    sdk = f"{spec.distribution} {location.sdk_version or '?'}"
    where = ("from " + location.source if location.source != "bundled" else "bundled")
    if location.path is None:
        return CheckResult(spec.label, Status.FAIL,
                           f"not found ({sdk} has no bundled {spec.commands[0]}, none on PATH)",
                           reinstall)
    fix = (f"unset {spec.override_env} or point it at a working {spec.commands[0]}"
           if spec.override_env and location.source == spec.override_env else reinstall)
    if not location.path.is_file():
        return CheckResult(spec.label, Status.FAIL, f"{location.path} does not exist ({where})",
                           fix)
    if not os.access(location.path, os.X_OK):
        return CheckResult(spec.label, Status.FAIL, f"{location.path} is not executable",
                           f"chmod +x '{location.path}', or {fix}")
    env = os.environ if environ is None else environ
    with tempfile.TemporaryDirectory(prefix="qoder-desktop-self-check-") as scratch:
        ok, answer = run_version(location.path, cli_env(env, Path(scratch)), Path(scratch),
                                 timeout)
    if not ok:
        return CheckResult(spec.label, Status.FAIL, f"{location.path} {answer}", fix)
    found = f"{answer}, {where} at {location.path} ({sdk})"
    expected = location.expected_version
    if expected and expected not in answer:
        return CheckResult(spec.label, Status.WARN, f"{found}; the SDK expects {expected}",
                           f"other versions may not work with this SDK: {fix}")
    if location.source == "PATH":
        return CheckResult(spec.label, Status.WARN, f"{found}; the SDK ships none",
                           f"{reinstall} (a wheel for your platform bundles the CLI)")
    return CheckResult(spec.label, Status.OK, found)
