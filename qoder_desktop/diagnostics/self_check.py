"""``qoder-desktop --self-check``: what a user runs when something does not work.

Each check prints one line: ``OK``, ``WARN`` or ``FAIL``, what it found, and for a WARN
or FAIL what to do about it (after ``->``). The exit code is 0 when nothing FAILs, 1
otherwise. Checks: the app itself, the keyring backend (and whether it is trusted),
``keyrings.alt``, the system tray, the desktop's notification service (a D-Bus probe),
the agent CLIs (found where the SDKs look for them, each run with ``--version`` offline
and with throw-away config folders) and whether the config/data/state/cache folders are
writable.

Core module: Qt is only touched through `qoder_desktop.ui.probe`, imported lazily and run
in a child process on Linux (Qt aborts the process when it cannot open the display).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from qoder_desktop import __version__
from qoder_desktop.config.paths import HOME_ENV, AppPaths
from qoder_desktop.config.secrets import SecretName, SecretStore
from qoder_desktop.diagnostics.isolated import has_display, run_isolated
from qoder_desktop.scripted_model.cli_env import DEAD_PROXY

if TYPE_CHECKING:
    from qoder_desktop.diagnostics.notification_check import NotificationProbe

CLI_TIMEOUT = 20.0
"""Seconds a CLI gets to answer ``--version``."""

TRAY_TIMEOUT = 20.0
"""Seconds the Qt tray probe gets."""

_OFFLINE_ENV = {
    "DISABLE_AUTOUPDATER": "1", "DISABLE_UPDATES": "1", "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "HTTP_PROXY": DEAD_PROXY, "HTTPS_PROXY": DEAD_PROXY, "ALL_PROXY": DEAD_PROXY,
    "http_proxy": DEAD_PROXY, "https_proxy": DEAD_PROXY, "all_proxy": DEAD_PROXY,
    "NO_PROXY": "", "no_proxy": "",
}
"""No updates, telemetry or other traffic while a CLI prints its version."""

_NO_TRAY_ADVICE = ("the window shows the pending count instead; for a tray icon enable your "
                   "panel's tray (GNOME: the AppIndicator extension)")
_QT_LIBS_ADVICE = ("install Qt's system libraries (Debian/Ubuntu: sudo apt install libegl1 "
                   "libxkbcommon-x11-0 libxcb-cursor0) and check DISPLAY/WAYLAND_DISPLAY")


class Status(StrEnum):
    """How a check came out."""

    OK = "OK"
    WARN = "WARN"
    FAIL = "FAIL"


@dataclass(frozen=True)
class CheckResult:
    """One line of the report.

    Attributes:
        name: what was checked, e.g. ``"keyring"``.
        status: OK, WARN or FAIL.
        found: what the check found (paths, versions, names).
        advice: what to do about a WARN or FAIL (empty for OK).
    """

    name: str
    status: Status
    found: str
    advice: str = ""

    def line(self) -> str:
        """The report line: status, name, finding and advice."""
        text = f"{self.status.value:<6}{self.name:<13}{self.found}"
        return f"{text} -> {self.advice}" if self.advice else text


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


def _bundle_root() -> Path | None:
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
    bundle = _bundle_root()
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
    frozen = _bundle_root() is not None
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


def check_app() -> CheckResult:
    """The app's version, Python, the platform, and where it runs from."""
    bundle = _bundle_root()
    where = (f"bundle {Path(sys.executable).parent}" if bundle is not None
             else f"package {Path(__file__).parent}")
    return CheckResult("app", Status.OK,
                       f"qoder-desktop {__version__}, Python {platform.python_version()}, "
                       f"{platform.system()} {platform.machine()}, {where}")


def check_keyring(store: SecretStore) -> CheckResult:
    """Which keyring backend is in use and whether Qoder Desktop trusts it."""
    status = store.check_backend()
    if status.usable:
        return CheckResult("keyring", Status.OK, f"{status.backend} (trusted OS keyring)")
    env_vars = " / ".join(name.env_var for name in SecretName)
    return CheckResult(
        "keyring", Status.WARN, f"{status.backend} (not trusted): {status.message}",
        f"secrets are read from {env_vars} instead; to keep them in a keyring, install and "
        "unlock GNOME Keyring or KWallet (Debian/Ubuntu: sudo apt install gnome-keyring)")


def check_keyrings_alt(
        find_spec: Callable[[str], object | None] = importlib.util.find_spec) -> CheckResult:
    """WARN when ``keyrings.alt`` (plain-file keyrings) is importable."""
    try:
        spec = find_spec("keyrings.alt")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return CheckResult("keyrings.alt", Status.OK, "not installed")
    where = getattr(spec, "origin", None) or "installed"
    return CheckResult("keyrings.alt", Status.WARN,
                       f"importable ({where}); its backends keep secrets in files",
                       "uninstall it (pip uninstall keyrings.alt); Qoder Desktop never uses it")


TrayProbe = Callable[[], tuple[bool | None, str]]
"""Returns ``(available, detail)``; the entry point gives `qoder_desktop.ui.probe.describe_tray`."""


def check_tray(environ: Mapping[str, str] | None = None, probe: TrayProbe | None = None,
               timeout: float = TRAY_TIMEOUT) -> CheckResult:
    """Whether Qt starts on this display and finds a system tray."""
    env = os.environ if environ is None else environ
    if probe is None:
        return CheckResult("tray", Status.WARN, "the Qt tray probe was not run",
                           "run `qoder-desktop --self-check`, which brings the probe")
    if not has_display(env):
        return CheckResult("tray", Status.WARN, "no display: tray not checked",
                           "run the self-check inside your desktop session (DISPLAY or "
                           "WAYLAND_DISPLAY set)")
    result, problem = run_isolated(probe, timeout)
    if problem is not None:
        advice = _QT_LIBS_ADVICE
        if "could not connect to display" in problem:
            advice = ("no display server answers at DISPLAY/WAYLAND_DISPLAY: run the "
                      "self-check inside your desktop session, or fix those variables")
        return CheckResult("tray", Status.FAIL, f"Qt could not start ({problem})", advice)
    available, detail = result
    if available is None:
        return CheckResult("tray", Status.WARN, f"no display: tray not checked ({detail})",
                           "run the self-check inside your desktop session")
    if not available:
        return CheckResult("tray", Status.WARN, f"no system tray ({detail})", _NO_TRAY_ADVICE)
    return CheckResult("tray", Status.OK, f"system tray available ({detail})")


def check_dir(label: str, folder: Path) -> CheckResult:
    """The folder exists (created 0700 if missing) and a file can be created and deleted."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, name = tempfile.mkstemp(prefix=".self-check-", dir=folder)
        try:
            os.write(fd, b"ok")
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return CheckResult(label, Status.FAIL, f"{folder} is not writable ({reason})",
                           f"fix its owner/permissions (chmod u+rwx '{folder}') or set "
                           f"{HOME_ENV} to a writable folder")
    return CheckResult(label, Status.OK, f"{folder} is writable")


def iter_checks(*, store: SecretStore | None = None, paths: AppPaths | None = None,
                environ: Mapping[str, str] | None = None, tray_probe: TrayProbe | None = None,
                notification_probe: NotificationProbe | None = None,
                clis: Sequence[CliSpec] = CLIS,
                locations: Mapping[str, CliLocation | str] | None = None,
                find_spec: Callable[[str], object | None] = importlib.util.find_spec,
                cli_timeout: float = CLI_TIMEOUT) -> Iterator[CheckResult]:
    """Run the checks one by one, yielding each result as soon as it is known.

    Args:
        store: the secret store whose keyring is checked (the default store when None).
        paths: the app's folders (`AppPaths.default` when None).
        environ: the environment (``os.environ`` when None).
        tray_probe: the Qt tray probe (`qoder_desktop.ui.probe.describe_tray`); None
            skips the tray check with a warning.
        notification_probe: looks for the desktop's notification service
            (`qoder_desktop.notifications.probe.probe_service`); None skips it with a warning.
        clis: the CLIs to check.
        locations: known locations by CLI label, instead of looking (tests).
        find_spec: how ``keyrings.alt`` is looked up (tests).
        cli_timeout: seconds each CLI gets to print its version.
    """
    env = os.environ if environ is None else environ
    folders = paths or AppPaths.default(env)
    yield check_app()
    yield check_keyring(store or SecretStore())
    yield check_keyrings_alt(find_spec)
    yield check_tray(env, tray_probe)
    from qoder_desktop.diagnostics.notification_check import check_notifications

    yield check_notifications(notification_probe)
    for spec in clis:
        found = (locations or {}).get(spec.label) or locate_cli(spec, env)
        yield check_cli(spec, found, environ=env, timeout=cli_timeout)
    for label, folder in (("config dir", folders.config_dir), ("data dir", folders.data_dir),
                          ("state dir", folders.state_dir), ("cache dir", folders.cache_dir)):
        yield check_dir(label, folder)


def summary(results: Sequence[CheckResult]) -> str:
    """The closing line: counts, and what the exit code means."""
    counts = {status: sum(r.status is status for r in results) for status in Status}
    text = f"{counts[Status.OK]} OK, {counts[Status.WARN]} WARN, {counts[Status.FAIL]} FAIL"
    if counts[Status.FAIL]:
        return f"{text}: fix the FAIL lines above (exit code 1)."
    if counts[Status.WARN]:
        return f"{text}: Qoder Desktop can run; the WARN lines say what works less well."
    return f"{text}: everything looks fine."


def run_self_check(out: TextIO | None = None, **options: Any) -> int:
    """Print the self-check report; 0 when nothing FAILs, 1 otherwise.

    Args:
        out: where to print (``sys.stdout`` when None).
        **options: passed to `iter_checks` (tests).
    """
    stream = out or sys.stdout
    print(f"Qoder Desktop self-check (qoder-desktop {__version__})", file=stream, flush=True)
    results: list[CheckResult] = []
    for result in iter_checks(**options):
        results.append(result)
        print(result.line(), file=stream, flush=True)
    print(summary(results), file=stream, flush=True)
    return 1 if any(r.status is Status.FAIL for r in results) else 0
